# Attack (fifteenth session): tvm_ffi.Function.__from_extern_c__ makes an FFI function whose code
# is any address the kernel gives (a call of it jumps there; left out here, the address is a
# Python object's). Refused statically (tvm_ffi's raw-address calls); with the static rules
# waived, at run time: a TVM-FFI function is made from a native address only by the DSL's own
# work (a checked compile's).
import torch
import tvm_ffi

_ADDRESS = id(torch)


def solve(x, residual, weight):
    tvm_ffi.Function.__from_extern_c__(_ADDRESS)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
