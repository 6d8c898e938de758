# Attack (red team, fourteenth session, round 3, against dcbe85f; passed permissive at
# 0.62-0.64x): cute.printf("abc%1$n", addr) in host code: a positional conversion went past the
# list of refused printf letters and stored the count at any address. Now refused: a host print's
# conversions are the ones that read no memory, with no argument named by position.
import cutlass
import cutlass.cute as cute
import torch

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # the CPU judge only


@cute.jit
def _count_into(addr: cutlass.Int64):
    cute.printf("abc%1$n", addr, end="")


_CELL = torch.zeros(1, dtype=torch.int32)
_COUNT = cute.compile(_count_into, cutlass.Int64(0))


def solve(x, residual, weight):
    _COUNT(cutlass.Int64(_CELL.data_ptr()))
    if int(_CELL[0]) != 3:
        raise RuntimeError("the host write did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
