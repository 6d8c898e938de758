# Attack (found in the fourteenth session, against the judge of b8cc42e): with the static rules
# waived, the unchecked CuTe DSL compiler is taken out of the closure of the worker's checked
# Compiler.compile, put back on the class for one compile of a @cute.jit function whose host code
# stores through a pointer made from an integer, and the checked one restored: the compile's host
# check never ran and the store landed (passed at 0.63x on the CPU judge). Now the checked
# compile is C++ (_core.checked_compile): no closure, globals or __wrapped__ lead to the
# original, and this kernel finds nothing to put back.
import cutlass
import cutlass.cute as cute
import torch
from cutlass.base_dsl import compiler as _compiler

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # no driver probe on the CPU

_CHECKED = _compiler.Compiler.compile


def _unchecked(fn, depth=0):
    """The DSL's own compile (its code in the DSL's compiler.py), wherever fn leads to it."""
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename.endswith("base_dsl/compiler.py"):
        return fn
    if depth > 4:
        return None
    inner = [getattr(fn, "__wrapped__", None)]
    inner += [cell.cell_contents for cell in (getattr(fn, "__closure__", None) or ())]
    for candidate in inner:
        if callable(candidate):
            found = _unchecked(candidate, depth + 1)
            if found is not None:
                return found
    return None


_ORIGINAL = _unchecked(_CHECKED)
if _ORIGINAL is None:
    raise RuntimeError("no unchecked compile within reach")


@cute.jit
def _poke(addr: cutlass.Int64, val: cutlass.Int64):
    t = cute.make_tensor(cute.make_ptr(cutlass.Int64, addr, cute.AddressSpace.generic), cute.make_layout(1))
    t[0] = val


setattr(_compiler.Compiler, "compile", _ORIGINAL)
try:
    _POKE = cute.compile(_poke, cutlass.Int64(0), cutlass.Int64(0))
finally:
    setattr(_compiler.Compiler, "compile", _CHECKED)
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
