"""FP8 block-scaled gate/up projections + SiLU gating (Qwen3-VL MLP) in CuTe DSL.

Two DSL kernels around six cuBLAS bfloat16 GEMMs:
1. dequantise and split: a CTA of 32 x 8 threads covers one 128-wide K block of 8 rows; each
   thread loads 4 FP8 codes (one 32-bit load), widens them to float32, multiplies by the block's
   scale (the row's 1 x 128 scale for the activation, the 128 x 128 block's for a weight) and
   splits each value v into hi = bf16(v) and lo = bf16(v - hi) (16 significant bits together),
   storing 4 of each (two 64-bit stores). Run on the activation and on both weights, every call
   (the codes change per draw).
2. gate: a CTA of 32 x 8 threads covers 128 columns of 8 rows of the two float32 GEMM results;
   each thread loads 4 gate and 4 up values (128-bit loads), computes silu(g) * u in float32
   (exp2 on pre-scaled values) and stores 4 bfloat16 (one 64-bit store), rounding once as the
   reference does.
Each of gate = a @ w_gate^T and up = a @ w_up^T is hi hi + hi lo + lo hi, three GEMMs on
bfloat16 tensor cores with float32 accumulation and output (`torch.mm(..., out_dtype=
torch.float32)`); the dropped lo lo term is below 2^-16 of an output's scale, far inside the
bf16 output's tolerance (the scheme is tested against the judge's rule on the small workload in
tests/python/test_quantization_references.py). The process's matmul settings are left as they
are. The eager reference multiplies in float32 without tensor cores.
"""

import math

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float8E4M3FN, Float32, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

BLOCK = 128  # K block of the scales (and rows of a weight block)
VEC = 4  # values per thread: 4 codes (32 bits) in, 4 bfloat16 hi and 4 lo (64 bits each) out
ROWS = 8  # rows per CTA
LOG2E = 1.4426950408889634


@cute.kernel
def _dequant_kernel(
    mCodes: cute.Tensor,
    mScale: cute.Tensor,
    mHi: cute.Tensor,
    mLo: cute.Tensor,
    block_rows: cutlass.Constexpr[int],
):
    tx, ty, _ = cute.arch.thread_idx()
    kb, rb, _ = cute.arch.block_idx()
    row = rb * ROWS + ty
    if row < mHi.shape[0]:
        scale = mScale[row // block_rows, kb]
        chunk = kb * (BLOCK // VEC) + tx
        load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float8E4M3FN, num_bits_per_copy=32)
        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=64)
        src = cute.local_tile(mCodes[row, None], (VEC,), (chunk,))
        hi_dst = cute.local_tile(mHi[row, None], (VEC,), (chunk,))
        lo_dst = cute.local_tile(mLo[row, None], (VEC,), (chunk,))
        codes = cute.make_fragment_like(src)
        cute.copy(load, src, codes)
        vals = codes.load().to(Float32) * scale
        hi = cute.make_fragment_like(hi_dst)
        hi.store(vals.to(BFloat16))
        lo = cute.make_fragment_like(lo_dst)
        lo.store((vals - hi.load().to(Float32)).to(BFloat16))
        cute.copy(store, hi, hi_dst)
        cute.copy(store, lo, lo_dst)


@cute.jit
def _dequant(
    mCodes: cute.Tensor,
    mScale: cute.Tensor,
    mHi: cute.Tensor,
    mLo: cute.Tensor,
    block_rows: cutlass.Constexpr[int],
    stream: cuda.CUstream,
):
    # The codes arrive as bytes (a uint8 view of the float8_e4m3fn tensor): read them as e4m3.
    codes = cute.make_tensor(cute.recast_ptr(mCodes.iterator, dtype=Float8E4M3FN), mCodes.layout)
    rows, cols = mHi.shape
    _dequant_kernel(codes, mScale, mHi, mLo, block_rows).launch(
        grid=(cols // BLOCK, cute.ceil_div(rows, ROWS), 1), block=(BLOCK // VEC, ROWS, 1), stream=stream
    )


@cute.kernel
def _gate_kernel(mGate: cute.Tensor, mUp: cute.Tensor, mOut: cute.Tensor):
    tx, ty, _ = cute.arch.thread_idx()
    cb, rb, _ = cute.arch.block_idx()
    row = rb * ROWS + ty
    if row < mOut.shape[0]:
        chunk = cb * (BLOCK // VEC) + tx
        load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float32, num_bits_per_copy=128)
        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=64)
        g_src = cute.local_tile(mGate[row, None], (VEC,), (chunk,))
        u_src = cute.local_tile(mUp[row, None], (VEC,), (chunk,))
        dst = cute.local_tile(mOut[row, None], (VEC,), (chunk,))
        g = cute.make_fragment_like(g_src)
        u = cute.make_fragment_like(u_src)
        cute.copy(load, g_src, g)
        cute.copy(load, u_src, u)
        h = cute.make_fragment_like(g)
        for i in cutlass.range_constexpr(VEC):
            x = g[i]
            h[i] = x / (Float32(1.0) + cute.math.exp2(-x * Float32(LOG2E), fastmath=True)) * u[i]
        out = cute.make_fragment_like(dst)
        out.store(h.load().to(BFloat16))
        cute.copy(store, out, dst)


@cute.jit
def _gate(mGate: cute.Tensor, mUp: cute.Tensor, mOut: cute.Tensor, stream: cuda.CUstream):
    rows, cols = mOut.shape
    _gate_kernel(mGate, mUp, mOut).launch(
        grid=(cols // BLOCK, cute.ceil_div(rows, ROWS), 1), block=(BLOCK // VEC, ROWS, 1), stream=stream
    )


def _fake(dtype, shape, align=16):
    return make_fake_compact_tensor(dtype, shape, stride_order=(1, 0), assumed_align=align)


_compiled = {}


def _dequantizer(rows, cols, block_rows):
    key = ("dequant", rows, cols, block_rows)
    fn = _compiled.get(key)
    if fn is None:
        scale_rows = math.ceil(rows / block_rows)
        fn = _compiled[key] = cute.compile(
            _dequant,
            _fake(Uint8, (rows, cols), 4),
            _fake(Float32, (scale_rows, cols // BLOCK), 4),
            _fake(BFloat16, (rows, cols), 8),
            _fake(BFloat16, (rows, cols), 8),
            block_rows,
            make_fake_stream(use_tvm_ffi_env_stream=True),
            options="--enable-tvm-ffi",
        )
    return fn


def _gater(rows, cols):
    key = ("gate", rows, cols)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = cute.compile(
            _gate,
            _fake(Float32, (rows, cols)),
            _fake(Float32, (rows, cols)),
            _fake(BFloat16, (rows, cols), 8),
            make_fake_stream(use_tvm_ffi_env_stream=True),
            options="--enable-tvm-ffi",
        )
    return fn


def _dequantised(codes, scale, block_rows):
    """The dequantised values split into (hi, lo), bfloat16 [rows, cols] each."""
    rows, cols = codes.shape
    if cols % BLOCK:
        raise ValueError(f"K = {cols}: expected a multiple of {BLOCK}")
    hi = torch.empty(rows, cols, dtype=torch.bfloat16, device=codes.device)
    lo = torch.empty_like(hi)
    _dequantizer(rows, cols, block_rows)(codes.view(torch.uint8), scale, hi, lo)
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
    _gater(rows, cols)(gate, up, out)
    return out
