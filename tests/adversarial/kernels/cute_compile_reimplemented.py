# Attack (fourteenth session, against the judge of cef675c): with the static rules waived, the
# worker's checked Compiler.compile is replaced, for the length of one compile, by the kernel's
# own compile that runs the DSL's pass pipeline itself (the pass manager hangs off a public
# attribute of the compiler object), so that the host check never sees a @cute.jit function that
# stores through a pointer made from an integer; the checked one is put back before the import
# returns, so the guard on the name sees nothing. Passed at 0.6x on the CPU judge with the store
# landing. Now the worker's process makes no executable memory once kernel.py loads but inside
# a checked compile of the DSL's own: the JIT of the unchecked module is refused
# (runtime.native_code).
import cutlass
import cutlass.cute as cute
import torch
from cutlass.base_dsl import compiler as _compiler

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # no driver probe on the CPU

_CHECKED = _compiler.Compiler.compile


def _own_compile(self, module, pipeline, *args, **kwargs):
    manager = self.passmanager.PassManager.parse(pipeline)
    manager.run(module.operation)
    return module


@cute.jit
def _poke(addr: cutlass.Int64, val: cutlass.Int64):
    t = cute.make_tensor(cute.make_ptr(cutlass.Int64, addr, cute.AddressSpace.generic), cute.make_layout(1))
    t[0] = val


_compiler.Compiler.compile = _own_compile
try:
    _POKE = cute.compile(_poke, cutlass.Int64(0), cutlass.Int64(0))
finally:
    _compiler.Compiler.compile = _CHECKED
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _POKE(cutlass.Int64(_CELL.data_ptr()), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
