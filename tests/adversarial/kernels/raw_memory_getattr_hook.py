# Raw memory through an attribute hook: __getattr__ answers names the source never spells, here
# the array-interface protocol's (matched by its pieces), so numpy's lookup finds a description
# of a raw address (the weight tensor's Python object) and wraps it unchecked. Computes the right
# answer, so only the audit can stop it.
import numpy as np
import torch


class Window:
    def __init__(self, address):
        self.address = address

    def __getattr__(self, name):
        if name.startswith("__array_") and name.endswith("face__"):
            return {"data": (self.address, False), "shape": (16,), "typestr": "|u1", "version": 3}
        raise AttributeError(name)


def solve(x, residual, weight):
    header = np.asarray(Window(id(weight)))
    print("the weight object's header:", bytes(header).hex())
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
