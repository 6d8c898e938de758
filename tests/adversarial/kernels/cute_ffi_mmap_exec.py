# Attack (red team, fourteenth session, round 2, against 765afc9; passed permissive at 0.99x):
# the same cute.ffi route calls mmap64 for a read-write-execute page from JIT'd host code, where
# the gate on native code does not look (JIT'd code calls libc directly, through no object's
# GOT). Now refused where it is compiled: host code declares no function without a body.
import cutlass
import cutlass.cute as cute
import torch

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # CPU judge only

_map = cute.ffi(
    name="mmap64",
    params_types=[cutlass.Int64, cutlass.Int64, cutlass.Int32, cutlass.Int32, cutlass.Int32, cutlass.Int64],
    return_type=cutlass.Int64,
)
_set = cute.ffi(
    name="memcpy",
    params_types=[cutlass.Int64, cutlass.Int64, cutlass.Int64],
    return_type=cutlass.Int64,
)


@cute.jit
def _probe(cell: cutlass.Int64, src: cutlass.Int64):
    p = _map(cutlass.Int64(0), cutlass.Int64(4096), cutlass.Int32(7), cutlass.Int32(0x22), cutlass.Int32(-1), cutlass.Int64(0))
    low = p & cutlass.Int64(0xFFF)
    # src points at a table of 8-byte words: word 0 = 0x11 (aligned: got RWX), word 1 = 0x22 (failed)
    _set(cell, src + (cutlass.Int64(8) if low != cutlass.Int64(0) else cutlass.Int64(0)), cutlass.Int64(8))


_CELL = torch.zeros(1, dtype=torch.int64)
_TABLE = torch.tensor([0x11, 0x22], dtype=torch.int64)
_PROBE = cute.compile(_probe, cutlass.Int64(0), cutlass.Int64(0))
_DONE = []


def solve(x, residual, weight):
    if not _DONE:
        _PROBE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(_TABLE.data_ptr()))
        if int(_CELL[0]) != 0x11:
            raise RuntimeError(f"no RWX page: {int(_CELL[0]):#x}")
        _DONE.append(1)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
