# Attack (red team, fourteenth session, against 0492790; passed permissive at 0.68x): the
# facts reader forged. ir.Operation.name, a property set on the class for one cute.compile, lies
# for two ops (cute.inttoptr reads as cute.make_shape, cute.memref.store as cute.make_coord), so
# the host check approves a store at any address. Now refused: the DSL's classes are frozen
# whole before kernel.py loads (Operation gained a name), and the property's code runs under
# the watch on kernel code while the check reads.
import cutlass
import cutlass.cute as cute
import torch
from cutlass._mlir import ir

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"

_REAL = ir.Operation.name  # the property of _OperationBase
_MAP = {"cute.inttoptr": "cute.make_shape", "cute.memref.store": "cute.make_coord"}


def _lying(self):
    n = _REAL.fget(self)
    return _MAP.get(str(n), n)


@cute.jit
def _poke(addr: cutlass.Int64, val: cutlass.Int64):
    t = cute.make_tensor(cute.make_ptr(cutlass.Int64, addr, cute.AddressSpace.generic), cute.make_layout(1))
    t[0] = val


ir.Operation.name = property(_lying)
try:
    _POKE = cute.compile(_poke, cutlass.Int64(0), cutlass.Int64(0), options="--enable-tvm-ffi")
finally:
    del ir.Operation.name
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
