# Attack (fifteenth session): TVM-FFI's registry function ffi.MakeFieldSetter takes two integers
# as addresses (a converter object and a C function) and returns a setter that calls the one with
# the other as its first argument: native code at any address, with no pointer object in sight
# (the next step, a call of the setter, is left out here: it would run address 0). Refused
# statically (get_global_func); with the static rules waived, at run time: the registry's
# raw-address functions are not called from Python at all.
import torch
import tvm_ffi

_MAKE = tvm_ffi.get_global_func("ffi.MakeFieldSetter")


def solve(x, residual, weight):
    _MAKE(0, 0, 0)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
