# A comparison of the kernel's own without naming one (tenth session's red team, 2026-12-07): a
# subclass of collections.abc.Set inherits __eq__, __lt__, ... written in Python, which call the
# subclass's __len__, __iter__ and __contains__ -- here made of C callables, never named by a def.
# Refused statically: collections.abc.Set is not a class kernel.py may derive from.
import collections.abc
import functools
import operator

import torch


class Bag(collections.abc.Set):
    pass


Bag.__len__ = functools.partial(len, ())  # bound by assignment: refused as a protocol method too
Bag.__iter__ = functools.partial(iter, ())
Bag.__contains__ = functools.partial(operator.contains, ())


def solve(x, residual, weight):
    if Bag() == Bag():  # the inherited __eq__ runs the bound hooks
        s = x.float() + residual.float()
        inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
        return (s * inv * weight.float()).to(x.dtype)
    raise RuntimeError("unreachable")
