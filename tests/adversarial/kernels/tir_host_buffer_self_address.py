# Attack (red team, fourteenth session, against 0492790): TIR host code (strict) indexes a host
# buffer of its own by an offset from its own address (T.address_of, reinterpreted as an int64:
# no handle made from a number, no let, no extern), so that B[idx] stores at any address; a GPU
# kernel in the same IRModule made the checked compile JIT the host code. Passed strict at
# 0.72-0.93x with the store landing. Now refused where tvm.compile checks it: host code reads
# or writes no buffer, and no pointer becomes a number (runtime.native_code).
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
    def poke(target: T.int64, val: T.int64) -> T.int64:
        B = T.alloc_buffer((64,), "int64")
        for i in range(64):
            B[i] = val
        B[(target - T.reinterpret("int64", T.address_of(B[0]))) // T.int64(8)] = val
        T.ret(B[0] + B[63])


_K = tvm.compile(Mod, target="cuda")
_F = _K["poke"]
_CELL = torch.zeros(1, dtype=torch.int64)


def solve(x, residual, weight):
    _CELL.zero_()
    _F(_CELL.data_ptr(), 7)
    if int(_CELL[0]) != 7:
        raise RuntimeError("the host store did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
