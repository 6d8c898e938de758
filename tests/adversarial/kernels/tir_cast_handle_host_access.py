# Attack (the class of tir_struct_host_access): the same host-side struct builtins on a handle
# made from a number with T.Cast instead of T.reinterpret. Refused where TVM is asked to compile
# it (runtime.native_code), whichever way the pointer is made.
import torch
import tvm
from tvm.script import tirx as T


@T.prim_func
def poke(addr: T.int64, v: T.int64):
    T.evaluate(T.tvm_struct_set(T.Cast("handle", addr), 0, 1, T.Cast("handle", v)))


@T.prim_func
def peek(addr: T.int64, dst: T.int64):
    T.evaluate(T.tvm_struct_set(T.Cast("handle", dst), 0, 1, T.tvm_struct_get(T.Cast("handle", addr), 0, 1, "handle")))


_OUT = torch.zeros(1, dtype=torch.int64)
_PEEK = None
_CELL = torch.zeros(4, dtype=torch.int64)
_POKE = None


def solve(x, residual, weight):
    global _POKE, _PEEK
    if _PEEK is None:
        _PEEK = tvm.compile(peek, target="cuda")
    probe = object()
    _PEEK(id(probe) + 8, _OUT.data_ptr())  # ob_type of any object, read by address
    if int(_OUT[0]) != id(object):
        raise RuntimeError("the host read did not land")
    if _POKE is None:
        _POKE = tvm.compile(poke, target="cuda")
    _POKE(_CELL.data_ptr() + 16, 1234)
    if int(_CELL[2]) != 1234:
        raise RuntimeError("the host write did not land")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
