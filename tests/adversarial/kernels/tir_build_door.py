# The round-20b unchecked-buffer kernel through TVM's other door: tvm.tirx.build for the CPU, not
# tvm.compile (the worker checks both, and tvm.driver.build_module's compile and build).
# Red team round 20b, second route: no call_extern, no native name at all. TIR buffers are not
# bounds-checked: a (1,)-element int64 buffer indexed by a run-time int64 reads and writes any
# address of the worker (index = (address - data_ptr) // 8). The interpreter's state is found
# from id(int) (a static type of the same binary), a C function pointer from a type object's
# tp_iternext slot; one of the judge's no-op pending calls becomes starmap's next() on a starmap
# of the honest TIR kernel, run by the main thread after the clock.
import itertools

import torch
import tvm
from tvm.script import tirx as T

HIDDEN = 4096
INTERP_FROM_INT = 1068696  # &_PyRuntime._main_interpreter - &PyLong_Type (this judge's CPython 3.11.7)
PENDING_CALLS = 128
PENDING_FIRST_LAST = 640
TP_ITERNEXT = 224


@T.prim_func
def rd(A: T.Buffer((T.int64(2),), "int64"), B: T.Buffer((T.int64(1),), "int64"), i: T.int64):
    A[T.int64(0)] = B[i]


@T.prim_func
def wr(B: T.Buffer((T.int64(1),), "int64"), i: T.int64, v: T.int64):
    B[i] = v


@T.prim_func
def rms(x_h: T.handle, r_h: T.handle, w_h: T.handle, o_h: T.handle):
    n = T.int32()
    X = T.match_buffer(x_h, (n, HIDDEN), "bfloat16")
    R = T.match_buffer(r_h, (n, HIDDEN), "bfloat16")
    W = T.match_buffer(w_h, (HIDDEN,), "bfloat16")
    Y = T.match_buffer(o_h, (n, HIDDEN), "bfloat16")
    s = T.alloc_buffer((HIDDEN,), "float32")
    acc = T.alloc_buffer((1,), "float32")
    for i in range(n):
        acc[0] = T.float32(0)
        for j in range(HIDDEN):
            s[j] = T.Cast("float32", X[i, j]) + T.Cast("float32", R[i, j])
            acc[0] = acc[0] + s[j] * s[j]
        for j in range(HIDDEN):
            Y[i, j] = T.Cast(
                "bfloat16",
                s[j] * T.rsqrt(acc[0] * T.float32(1.0 / HIDDEN) + T.float32(1e-5)) * T.Cast("float32", W[j]),
            )


RD = tvm.tirx.build(rd, target="llvm")["rd"]
WR = tvm.tirx.build(wr, target="llvm")["wr"]
RMS = tvm.tirx.build(rms, target="llvm")["rms"]
A = torch.zeros(2, dtype=torch.int64)
B = torch.zeros(1, dtype=torch.int64)
BASE = B.data_ptr()
QUEUE = id(int) + INTERP_FROM_INT
NEXT = None
KEEP = []


def peek(address):
    RD(A, B, (address - BASE) // 8)
    return int(A[0])


def solve(hidden_states, residual, weight):
    global NEXT
    out = torch.empty_like(hidden_states)
    job = itertools.starmap(RMS, [(hidden_states, residual, weight, out)])
    KEEP[:] = [job, out]
    if NEXT is None:
        NEXT = peek(id(itertools.starmap) + TP_ITERNEXT)
    last = peek(QUEUE + PENDING_FIRST_LAST) >> 32
    entry = QUEUE + PENDING_CALLS + 16 * ((last - 1) % 32)
    WR(B, (entry - BASE) // 8, NEXT)
    WR(B, (entry + 8 - BASE) // 8, id(job))
    return out
