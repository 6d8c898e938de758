# Honest (fifteenth session): a host-only @cute.jit function with a stream parameter, compiled
# through CuTe DSL's TVM-FFI provider, then called through its TVM-FFI function directly (not the
# DSL's wrapped __call__), with a CUstream: an opaque pointer to a function of TVM-FFI's library.
# The gate on TVM-FFI's C API lets it through because the checked compile made that function (its
# handle is among the approved ones). Permissive: the DSL's configuration and private attribute.
import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"
import torch


@cute.jit
def _scale(n: cutlass.Int32, stream: cuda.CUstream):
    m = n * 2
    cute.printf("%d\n", m)


_COMPILED = None


def solve(x, residual, weight):
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = cute.compile(
            _scale, cutlass.Int32(1), cuda.CUstream(0), options="--enable-tvm-ffi"
        )
    _COMPILED._tvm_ffi_function(3, cuda.CUstream(0))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
