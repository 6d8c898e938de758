# Attack (the class of cute_make_ptr_host_store, with no pointer from an integer): a pointer of a
# tensor of the kernel's own, moved by any offset in a @cute.jit function (pointer arithmetic is
# what honest host code does to make typed views), then stored through on the host: the DSL's
# compiled host code writes wherever the offset lands. Here it stores into the kernel's own
# tensor at offset 0 (and raises if the store did not land), then computes the answer. Refused
# where the DSL compiles it: the host code may make no memory access (runtime.native_code), with
# or without the static rules. On the CPU judge the compile needs the DSL's private
# configuration (_get_dsl().envar.arch, itself refused statically), a GPU judge would not.
import cutlass
import cutlass.cute as cute
import torch
from cutlass.cute.runtime import from_dlpack

cutlass.cutlass_dsl.CuTeDSL._get_dsl().envar.arch = "sm_90a"  # no driver probe on the CPU


@cute.jit
def _store(m: cute.Tensor, val: cutlass.Int64):
    t = cute.make_tensor(m.iterator + 0, cute.make_layout(1))
    t[0] = val


_CELL = torch.zeros(1, dtype=torch.int64)
_STORE = None


def solve(x, residual, weight):
    global _STORE
    if _STORE is None:
        _STORE = cute.compile(_store, from_dlpack(_CELL), cutlass.Int64(0))
    _STORE(from_dlpack(_CELL), cutlass.Int64(7))
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
