# Honest (fourteenth session): a host-only @cute.jit function compiled through the TVM-FFI
# provider and called, with the worker's gate on native code armed: CuTe DSL makes its
# executable memory (MLIR's engine, then TVM-FFI's JIT link) inside cute.compile, after the
# checked compile approved it, for the DSL's own frames. On the CPU judge the compile needs the
# DSL's configuration (arch), which only the permissive mode allows.
import cutlass
import cutlass.cute as cute

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"
import torch


@cute.jit
def _scale(n: cutlass.Int32):
    m = n * 2
    cute.printf("%d\n", m)


_COMPILED = None


def solve(x, residual, weight):
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = cute.compile(_scale, cutlass.Int32(1), options="--enable-tvm-ffi")
        _COMPILED(cutlass.Int32(3))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
