# Attack (red team, thirteenth session, round 2): CuTe DSL host code copying through a pointer
# moved by any offset (cute.basic_copy emits cute.copy, which the first word list missed), landing
# in another allocation of the kernel's; passed strict with the compile's arch set through the jit
# function's own _dsl_cls (a GPU judge needs no such line). Now refused statically (_dsl_cls,
# envar) and where the DSL compiles it (runtime.native_code: no memory access in host code).
import cutlass
import cutlass.cute as cute
import torch
from cutlass.cute.runtime import from_dlpack


@cute.jit
def _poke(src: cute.Tensor, dst: cute.Tensor, off: cutlass.Int64):
    s = cute.make_tensor(src.iterator, cute.make_layout(1))
    d = cute.make_tensor(dst.iterator + off, cute.make_layout(1))
    cute.basic_copy(s, d)


_poke._dsl_cls._get_dsl().envar.arch = "sm_90a"  # the CPU judge only: no driver to probe


_SRC = torch.full((1,), 7, dtype=torch.int64)
_BASE = torch.zeros(1, dtype=torch.int64)
_FAR = torch.zeros(1, dtype=torch.int64)  # a separate allocation, reached from _BASE's pointer
_POKE = None


def solve(x, residual, weight):
    global _POKE
    off = (_FAR.data_ptr() - _BASE.data_ptr()) // 8
    if _POKE is None:
        _POKE = cute.compile(_poke, from_dlpack(_SRC), from_dlpack(_BASE), cutlass.Int64(off))
    _POKE(from_dlpack(_SRC), from_dlpack(_BASE), cutlass.Int64(off))
    if int(_FAR[0]) != 7:
        raise RuntimeError("the host copy did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
