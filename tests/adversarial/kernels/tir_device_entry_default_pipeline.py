# Attack (red team, fourteenth session, round 3, against dcbe85f; passed strict at 0.69x): a
# PrimFunc whose body follows T.device_entry() compiled with TVM's default pipeline, which
# compiles that region as host code (the check took T.device_entry for device code under any
# pipeline), storing at any address through a host buffer indexed from its own address, taken
# with T.call_intrin("int64", "tirx.address_of", ...). Now refused: T.device_entry is device
# code under TIRx's pipeline only, and an address typed as a number is refused.
import torch
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T


@I.ir_module
class Mod:
    @T.prim_func
    def add(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (128,), "float32")
        B = T.match_buffer(b, (128,), "float32")
        for i in T.thread_binding(128, thread="threadIdx.x"):
            B[i] = A[i] + 1.0

    @T.prim_func
    def poke(target: T.int64, base: T.int64, val: T.int64) -> T.int64:
        T.device_entry()
        B = T.alloc_buffer((64,), "int64")
        for i in range(64):
            B[i] = val
        B[1] = T.call_intrin("int64", "tirx.address_of", B[0])
        B[(target - B[1]) // T.int64(8)] = val
        T.ret(B[2])

_K = tvm.compile(Mod, target="cuda")
_F = _K["poke"]
_CELL = torch.zeros(4, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    _F(_CELL.data_ptr() + 8, 0, 7)
    if int(_CELL[1]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
