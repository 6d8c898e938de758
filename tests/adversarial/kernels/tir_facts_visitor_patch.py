# Attack (red team, fourteenth session, against 0492790; passed permissive at 0.85x): the TIR
# facts reader's walk, tvm.tirx.stmt_functor.post_order_visit, replaced by `slice` (a C callable:
# no frame for the watch) for one tvm.compile, so that it reads no op, and a handle made from a
# number stores anywhere. Now refused: the DSL's modules are frozen before kernel.py loads, and a
# checked compile with one of their names replaced is refused.
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
    def poke(addr: T.int64, val: T.int64):
        p2: T.let[T.handle("int64")] = T.reinterpret("handle", addr)
        B = T.decl_buffer((1,), "int64", data=p2)
        B[0] = val


_VISIT = tvm.tirx.stmt_functor.post_order_visit
tvm.tirx.stmt_functor.post_order_visit = slice  # a C callable: no kernel frame while the watch is on
try:
    _K = tvm.compile(Mod, target="cuda")
finally:
    tvm.tirx.stmt_functor.post_order_visit = _VISIT
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
