# Honest (fifteenth session): a Python function of the kernel's made a TVM-FFI function and called
# through it, with the gate on TVM-FFI's C API armed: TVM-FFI's Python-callback trampoline makes
# functions anywhere, and a call with no pointer among its arguments goes on.
import torch
import tvm_ffi


def _next(n):
    return n + 1


_NEXT = tvm_ffi.convert(_next)


def solve(x, residual, weight):
    if _NEXT(41) != 42:
        raise RuntimeError("the callback did not run")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
