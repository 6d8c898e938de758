"""FP8 block-scaled gate/up projections + SiLU gating (Qwen3-VL MLP) in TVM TIRx.

Two TIRx kernels around six cuBLAS bfloat16 GEMMs:
1. dequantise and split: one thread per 16 codes of a row; it loads them with one 128-bit load,
   widens them to float32, multiplies by the scale of their block (the row's 1 x 128 scale for
   the activation, the 128 x 128 block's for a weight), splits each value v into hi = bf16(v)
   and lo = bf16(v - hi) (16 significant bits together) and stores 16 of each (two 128-bit
   stores each). Run on the activation and on both weights, every call (the codes change per
   draw).
2. gate: one thread per 8 outputs; it loads 8 gate and 8 up values (two 128-bit loads each),
   computes silu(g) * u in float32 (exp2 on pre-scaled values) and stores 8 bfloat16 with one
   128-bit store, rounding once as the reference does.
Each of gate = a @ w_gate^T and up = a @ w_up^T is hi hi + hi lo + lo hi, three GEMMs on
bfloat16 tensor cores with float32 accumulation and output (`torch.mm(..., out_dtype=
torch.float32)`); the dropped lo lo term is below 2^-16 of an output's scale, far inside the
bf16 output's tolerance (the scheme is tested against the judge's rule on the small workload in
tests/python/test_quantization_references.py). The process's matmul settings are left as they
are. The eager reference multiplies in float32 without tensor cores.
"""

import torch
import tvm
from tvm.script import tirx as T

BLOCK = 128  # K block of the scales (and rows of a weight block)
THREADS = 256
LOG2E = 1.4426950408889634


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build_dequant(cols: int, block_rows: int):
    chunks = cols // 16  # threads per row

    @T.prim_func
    def dequant(c_h: T.handle, s_h: T.handle, hi_h: T.handle, lo_h: T.handle):
        rows = T.int32()
        scale_rows = T.int32()
        C = T.match_buffer(c_h, (rows, cols), "float8_e4m3fn")
        S = T.match_buffer(s_h, (scale_rows, cols // BLOCK), "float32")
        H = T.match_buffer(hi_h, (rows, cols), "bfloat16")
        L = T.match_buffer(lo_h, (rows, cols), "bfloat16")
        T.device_entry()
        cta = T.cta_id([T.ceildiv(rows * chunks, THREADS)])
        tid = T.thread_id([THREADS])
        codes = T.alloc_local((16,), "float8_e4m3fn")
        hi = T.alloc_local((16,), "bfloat16")
        lo = T.alloc_local((16,), "bfloat16")
        idx = T.meta_var(cta * THREADS + tid)
        row = T.meta_var(idx // chunks)
        col = T.meta_var(idx % chunks * 16)
        if idx < rows * chunks:
            for v in T.vectorized(16):
                codes[v] = C[row, col + v]
            scale = S[row // block_rows, col // BLOCK]
            for v in T.unroll(16):
                val = T.meta_var(T.float32(codes[v]) * scale)
                hi[v] = T.bfloat16(val)
                lo[v] = T.bfloat16(val - T.float32(hi[v]))
            for h in T.unroll(2):
                for v in T.vectorized(8):
                    H[row, col + h * 8 + v] = hi[h * 8 + v]
            for h in T.unroll(2):
                for v in T.vectorized(8):
                    L[row, col + h * 8 + v] = lo[h * 8 + v]

    return dequant


def _build_gate(cols: int):
    chunks = cols // 8

    @T.prim_func
    def gate(g_h: T.handle, u_h: T.handle, o_h: T.handle):
        rows = T.int32()
        G = T.match_buffer(g_h, (rows, cols), "float32")
        U = T.match_buffer(u_h, (rows, cols), "float32")
        Out = T.match_buffer(o_h, (rows, cols), "bfloat16")
        T.device_entry()
        cta = T.cta_id([T.ceildiv(rows * chunks, THREADS)])
        tid = T.thread_id([THREADS])
        g = T.alloc_local((8,), "float32")
        u = T.alloc_local((8,), "float32")
        h = T.alloc_local((8,), "bfloat16")
        idx = T.meta_var(cta * THREADS + tid)
        row = T.meta_var(idx // chunks)
        col = T.meta_var(idx % chunks * 8)
        if idx < rows * chunks:
            for half in T.unroll(2):
                for v in T.vectorized(4):
                    g[half * 4 + v] = G[row, col + half * 4 + v]
            for half in T.unroll(2):
                for v in T.vectorized(4):
                    u[half * 4 + v] = U[row, col + half * 4 + v]
            for v in T.unroll(8):
                x = T.meta_var(g[v])
                h[v] = T.bfloat16(x / (T.float32(1) + T.exp2(-x * T.float32(LOG2E))) * u[v])
            for v in T.vectorized(8):
                Out[row, col + v] = h[v]

    return gate


_KERNELS = {}


def _kernel(key, device, build):
    full = (key, str(device))
    fn = _KERNELS.get(full)
    if fn is None:
        mod = tvm.IRModule({"main": build()})
        fn = _KERNELS[full] = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
    return fn


def _dequantised(codes, scale, block_rows):
    """The dequantised values split into (hi, lo), bfloat16 [rows, cols] each."""
    rows, cols = codes.shape
    if cols % BLOCK:
        raise ValueError(f"K = {cols}: expected a multiple of {BLOCK}")
    hi = torch.empty(rows, cols, dtype=torch.bfloat16, device=codes.device)
    lo = torch.empty_like(hi)
    fn = _kernel(("dequant", cols, block_rows), codes.device, lambda: _build_dequant(cols, block_rows))
    fn(codes, scale, hi, lo)
    return hi, lo


def _mm_float32(a, b):
    """a @ b of bfloat16 operands in float32: on a GPU, bfloat16 tensor cores with float32
    accumulation and output; torch has no such CPU kernel (`mkb check` runs the host code on the
    CPU), where the operands are widened to float32 instead."""
    if a.is_cuda:
        return torch.mm(a, b, out_dtype=torch.float32)
    return a.float() @ b.float()


def _split_product(a, w):
    """a @ w^T from split operands: hi hi + hi lo + lo hi, accumulated in float32."""
    (a_hi, a_lo), (w_hi, w_lo) = a, w
    out = _mm_float32(a_hi, w_hi.T)
    out += _mm_float32(a_hi, w_lo.T)
    out += _mm_float32(a_lo, w_hi.T)
    return out


def solve(x, scale_x, gate_proj_weight, scale_gate, up_proj_weight, scale_up):
    a = _dequantised(x, scale_x, 1)
    gate = _split_product(a, _dequantised(gate_proj_weight, scale_gate, BLOCK))
    up = _split_product(a, _dequantised(up_proj_weight, scale_up, BLOCK))
    del a
    rows, cols = gate.shape
    out = torch.empty(rows, cols, dtype=torch.bfloat16, device=gate.device)
    _kernel(("gate", cols), gate.device, lambda: _build_gate(cols))(gate, up, out)
    return out
