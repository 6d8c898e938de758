# Raw memory through keyword names unpacked from a mapping: SimpleNamespace(**d) makes every key
# an attribute, here the array-interface protocol's name, computed so that it never appears in
# the source. numpy wraps the raw address (the weight tensor's Python object) unchecked. Computes
# the right answer, so only the audit can stop it.
import types

import numpy as np
import torch

PROTOCOL = "__" + "array_" + "interface" + "__"


def solve(x, residual, weight):
    description = {"data": (id(weight), False), "shape": (16,), "typestr": "|u1", "version": 3}
    header = np.asarray(types.SimpleNamespace(**{PROTOCOL: description}))
    print("the weight object's header:", bytes(header).hex())
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
