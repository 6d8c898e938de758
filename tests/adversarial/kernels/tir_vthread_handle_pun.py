# Attack (red team, fourteenth session, round 2, against 765afc9; passed strict at 0.69-0.76x):
# TIR host code inside a virtual-thread loop (TVM lowers it into the host function; the check
# took every thread-binding loop for device code), a buffer of handles declared over an int64
# buffer's data (a pointer made a number by a pun, no reinterpret or cast), and a store at any
# address through a host buffer indexed from its own address; TVM's passes that refuse the handle
# store switched off for the compile. Now refused: only the GPU's threads and blocks are device
# code, a buffer of handles and a compile with passes switched off are refused.
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
        B = T.alloc_buffer((64,), "int64")
        P = T.alloc_buffer((4,), "int64")
        for v in T.thread_binding(1, thread="vthread"):
            for i in range(64):
                B[i] = val
            H = T.decl_buffer((4,), "handle", data=P.data)
            H[0] = T.address_of(B[0])
            if base != T.int64(0):
                B[(target - base) // T.int64(8)] = val
                for i in range(63):
                    B[63] = B[63] + B[i]
                T.ret(B[63])
            else:
                T.ret(P[0])


with tvm.transform.PassContext(disabled_pass=["tirx.RemoveNoOp", "tirx.NarrowDataType"]):
    _K = tvm.compile(Mod, target="cuda")
_F = _K["poke"]
_CELL = torch.zeros(4, dtype=torch.int64)


def _poke(target, base, val):
    return _F(target, base, val)


def solve(x, residual, weight):
    _CELL.zero_()
    base = _poke(0, 0, 0)  # the address of B[0] in this frame
    _poke(_CELL.data_ptr() + 8, base, 7)
    if int(_CELL[1]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


if __name__ == "__main__":
    solve(torch.ones(2, 8), torch.ones(2, 8), torch.ones(8))
    print("landed", _CELL.tolist())
