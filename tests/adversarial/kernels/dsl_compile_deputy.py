# PERMISSIVE mode: the CuTe DSL's compile as a deputy inside its own entry point. cute.compile
# traces the function it is given by calling it; given cute.jit(preprocess=False) over a
# functools.partial of ctypes.CDLL (a C callable dressed with a Python function's attributes so
# that the DSL accepts it), the DSL's tracer (base_dsl/dsl.py) calls CDLL(None): the dlopen's
# innermost frame outside the standard library is the DSL's, inside the wrapped entry point,
# with no frame of the kernel's in between. Without the native-layer rule (inside an entry point
# the DSL's code is trusted for ctypes only where its own module uses ctypes) the dlopen ran and
# the kernel passed.
import functools
import sys

import cutlass.cute as cute
import torch

_ctypes = sys.modules["ctypes"]
_target = functools.partial(_ctypes.CDLL, None)


def _shape():
    pass


for _name in (
    "__code__",
    "__name__",
    "__qualname__",
    "__module__",
    "__globals__",
    "__defaults__",
    "__kwdefaults__",
    "__annotations__",
    "__closure__",
):
    setattr(_target, _name, getattr(_shape, _name))
cute.compile(cute.jit(preprocess=False)(_target))
print("dlopen(None) ran inside cute.compile")


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (total * inv_rms * weight.float()).to(hidden_states.dtype)
