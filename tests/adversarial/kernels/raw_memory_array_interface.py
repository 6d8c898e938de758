# Raw memory with no ctypes and no audit event: an object whose array interface names a raw
# address (here the weight tensor's own Python object, found by id) is wrapped by numpy unchecked,
# which reads (or, writable, writes) whatever lives there. Computes the right answer, so only the
# audit can stop it.
import numpy as np
import torch


class Window:
    def __init__(self, address, size):
        self.__array_interface__ = {
            "data": (address, False),
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


def solve(x, residual, weight):
    header = np.asarray(Window(id(weight), 16))
    print("the weight object's header:", bytes(header).hex())
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
