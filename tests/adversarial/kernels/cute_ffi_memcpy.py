# Attack (red team, fourteenth session, round 2, against 765afc9; passed permissive at 0.56x):
# CuTe DSL host code calls libc's memcpy by name through cute.ffi (a public API: a func.func
# declared without a body and a func.call, both of the allowed func dialect, no memory word), on
# addresses passed as Int64: an arbitrary read and write. Now refused: host code declares no
# function without a body (a native symbol called by name).
import cutlass
import cutlass.cute as cute
import torch

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # CPU judge only

_copy = cute.ffi(
    name="memcpy",
    params_types=[cutlass.Int64, cutlass.Int64, cutlass.Int64],
    return_type=cutlass.Int64,
)


@cute.jit
def _poke(dst: cutlass.Int64, src: cutlass.Int64):
    _copy(dst, src, cutlass.Int64(8))


_SRC = torch.full((1,), 7, dtype=torch.int64)
_CELL = torch.zeros(1, dtype=torch.int64)
_POKE = cute.compile(_poke, cutlass.Int64(0), cutlass.Int64(0))


def solve(x, residual, weight):
    _CELL.zero_()
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(_SRC.data_ptr()))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
