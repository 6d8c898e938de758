# Attack (fifteenth session, the fourteenth session's residual): the red team's descriptor at
# Compiler.jit (cute_jit_descriptor_inject) moved from the class, which is frozen, to the DSL's
# compiler object itself: an instance attribute `jit` shadows the class's method for one compile,
# and after the checked compile approved an honest module it writes llvm.inttoptr + llvm.store
# into that module's host function before the DSL's own jit makes it executable. Refused: the
# DSL's objects on its compile path are frozen too (no callable attribute gained, none set over
# its class's).
import cutlass
import cutlass.cute as cute
import torch
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl import compiler as _compiler

_DSL = cutlass.cutlass_dsl.CuTeDSL._get_dsl()
_DSL.envar.arch = "sm_90a"
_CAP = []


def _capture():
    op = ir.InsertionPoint.current.block.owner
    while op is not None and op.name != "builtin.module":
        op = op.parent
    _CAP.append(op)


@cute.jit
def _f(addr: cutlass.Int64, val: cutlass.Int64):
    _capture()


def _inject(m):
    with m.context, ir.Location.unknown():
        for op in m.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == "cutlass__f__":
                block = op.regions[0].blocks[0]
                ret = list(block.operations)[-1]
                with ir.InsertionPoint(ret):
                    p = llvm.inttoptr(llvm.PointerType.get(), block.arguments[0])
                    llvm.store(block.arguments[1], p)


_PROVIDER = _DSL.compiler_provider


def _door(module, *args, **kwargs):
    if _CAP:
        _inject(_CAP.pop())
    return _compiler.Compiler.jit(_PROVIDER, module, *args, **kwargs)


_PROVIDER.jit = _door
try:
    _POKE = cute.compile(_f, cutlass.Int64(0), cutlass.Int64(0))
finally:
    del _PROVIDER.jit
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
