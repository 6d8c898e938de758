# Attack (red team, fourteenth session, against 0492790; passed permissive at 0.71x): after the
# checked Compiler.compile approved an honest module, and before compile_and_jit's self.jit, a
# descriptor the kernel put at Compiler.jit runs (its __get__) and writes llvm.inttoptr +
# llvm.store into the lowered host function of that module (captured while tracing); the DSL's
# own jit then made it executable under the entry call's approval. Now refused: the DSL's
# classes and modules are frozen before kernel.py loads, and a compile (or its executable
# memory) with one of their names replaced is refused.
import cutlass
import cutlass.cute as cute
import torch
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl import compiler as _compiler

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"
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


_ORIG_JIT = _compiler.Compiler.jit


class _Door:
    def __get__(self, obj, typ=None):
        if _CAP:
            _inject(_CAP.pop())
        return _ORIG_JIT.__get__(obj, typ)


_compiler.Compiler.jit = _Door()
try:
    _POKE = cute.compile(_f, cutlass.Int64(0), cutlass.Int64(0))
finally:
    _compiler.Compiler.jit = _ORIG_JIT
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
