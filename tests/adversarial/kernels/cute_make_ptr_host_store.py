# Attack (red team, thirteenth session): CuTe DSL's own host code as a raw-memory primitive. A
# @cute.jit function is compiled to native host code in the worker; a tensor over
# cute.make_ptr(Int64, <integer address>) stores anywhere, with no audit event and no refused
# name at the time. The red team wrote the interpreter's signal table with it, so that the
# worker's main thread computed the answer after the clock (7.4-7.6x strict on the CPU judge). On
# the CPU judge the compile needs the DSL's private configuration (_get_dsl().envar.arch), a
# GPU judge would not. This one stores into a tensor of its own by its integer address (and raises
# if the store did not land), then computes the answer. Refused statically: make_ptr anywhere,
# and the DSLs' private names. With the static rules waived it passes: the DSL's compiled host
# code has no runtime layer (docs/judge.md, residual risks).
import cutlass
import cutlass.cute as cute
import torch

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # no driver probe on the CPU


@cute.jit
def _poke(addr: cutlass.Int64, val: cutlass.Int64):
    t = cute.make_tensor(cute.make_ptr(cutlass.Int64, addr, cute.AddressSpace.generic), cute.make_layout(1))
    t[0] = val


_POKE = cute.compile(_poke, cutlass.Int64(0), cutlass.Int64(0))
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
