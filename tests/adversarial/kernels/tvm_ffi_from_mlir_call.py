# Attack (fifteenth session): tvm_ffi.Function.__from_mlir_packed_safe_call__ makes an FFI function
# whose code is TVM-FFI's own MLIR trampoline, which calls any address the kernel gives (held in
# its closure, so the function's code looks installed). Refused statically (tvm_ffi's raw-address
# calls); with the static rules waived, at run time: only the Python-callback trampoline (and,
# inside the DSL's entry calls, the code its JIT made) makes functions.
import torch
import tvm_ffi

_ADDRESS = id(torch)


def solve(x, residual, weight):
    tvm_ffi.Function.__from_mlir_packed_safe_call__(_ADDRESS)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
