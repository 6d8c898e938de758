# A protocol method bound with setattr and a name made from parts (tenth session, 2026-12-07): the
# sequence hooks numpy's array coercion calls while it holds a list's items borrowed. Refused
# statically (the names, however they are made, are protocol methods outside the short list).
import functools

import numpy as np
import torch


class Item:
    pass


setattr(Item, "__len" + "__", functools.partial(int, 0))
setattr(Item, "__getitem__", functools.partial(operator_getitem := (lambda i: [][i])))


def solve(x, residual, weight):
    np.array([Item(), Item()], dtype=object)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
