# An honest kernel whose objects raise when finalised (a C callable as __del__: no frame of
# kernel.py's runs between calls). Python ignores such an exception; so does the judge. The
# interpreter's printer used to parse the source line of the worker's frame the finaliser ran
# under, a compile the runtime audit refused: runtime.dynamic_code blamed on the kernel, naming
# worker.py.
import functools

import torch


class _Scratch:
    pass


_Scratch.__del__ = functools.partial(int, "not a number")  # raises ValueError when called


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    x._scratch = _Scratch()  # finalised when the worker lets go of the call's inputs
    return (s * inv * weight.float()).to(x.dtype)
