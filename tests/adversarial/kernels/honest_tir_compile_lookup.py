# Honest (fourteenth session): tvm.compile of a PrimFunc for CUDA and a look-up of its
# function, with the worker's gate on native code armed: TVM's LLVM JIT makes the host code
# executable at a module's first look-up, which the checked compile does itself (materialize),
# inside tvm.compile, so that the kernel's own look-up makes nothing.
import torch
import tvm
from tvm.script import tirx as T


@T.prim_func
def add(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (128,), "float32")
    B = T.match_buffer(b, (128,), "float32")
    for i in T.thread_binding(128, thread="threadIdx.x"):
        B[i] = A[i] + 1.0


_K = tvm.compile(add, target=tvm.target.Target({"kind": "cuda", "arch": "sm_90"}))
_F = _K["add"]


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
