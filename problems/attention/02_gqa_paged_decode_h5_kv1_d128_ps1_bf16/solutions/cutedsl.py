"""GQA paged decode (5 query heads on 1 KV head, head 128, page size 1) in CuTe DSL.

Split-K flash decoding in two kernels:

1. `_partial_kernel`, grid (batch, SPLITS), 128 threads: CTA (b, s) takes the s-th of SPLITS
   equal token ranges of sequence b. Its 8 groups of 16 lanes each take TOKENS tokens per step;
   a lane holds 8 of the 128 dims (one 128-bit load of K and of V per token), so a K/V row is
   read once and serves all 5 query heads (the GQA group). Per token and head the dot product
   is reduced over the 16 lanes with butterfly shuffles; the group keeps an online softmax
   (running max m, sum l, accumulator over V) in base 2 (logits scaled by sm_scale * log2 e;
   sm_scale, the call's argument, reaches the kernel as a one-element float32 tensor).
   The 8 group states are merged through shared memory into one partial (m, l, acc) per head.
2. `_merge_kernel`, grid (batch), 128 threads (one per dim): rescales the SPLITS partials to
   their common max, writes out = acc / l in bf16 and lse = m + log2(l), the base-2 LSE.

Tokens past the end of a range are loaded from page 0 (always valid) and masked with a -inf
logit; running maxima start at -1e30 (finite) so that masked or empty ranges contribute
exactly 0 without NaNs. K and V are read once from HBM; eager PyTorch loops over the batch in
Python with a dozen kernels per sequence.
"""

import math

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import torch
from cutlass import BFloat16, Float32, Int32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

HEAD_DIM = 128
LOG2E = 1.4426950408889634
SPLITS = 8  # token ranges per sequence (CTAs per sequence)
THREADS = 128
LANES = 16  # lanes per token: 16 x 8 dims
VEC = HEAD_DIM // LANES
GROUPS = THREADS // LANES
TOKENS = 4  # tokens a group loads per step (2 x TOKENS 128-bit loads in flight per lane)
NEG_BIG = -1.0e30


@cute.kernel
def _partial_kernel(
    mQ: cute.Tensor,  # (batch, heads, 128) bf16
    mK: cute.Tensor,  # (pages, 128) bf16
    mV: cute.Tensor,
    mIndptr: cute.Tensor,
    mIndices: cute.Tensor,
    mPartAcc: cute.Tensor,  # (batch, SPLITS, heads, 128) f32
    mPartM: cute.Tensor,  # (batch, SPLITS, heads) f32
    mPartL: cute.Tensor,
    mScale: cute.Tensor,  # (1,) f32: sm_scale * log2(e), logits in base 2
    heads: cutlass.Constexpr[int],
):
    tidx, _, _ = cute.arch.thread_idx()
    b, split, _ = cute.arch.block_idx()
    scale_log2 = mScale[0]
    group = tidx // LANES
    lane = tidx % LANES

    seq_start = mIndptr[b]
    seq_len = mIndptr[b + 1] - seq_start
    chunk = (seq_len + SPLITS - 1) // SPLITS
    begin = split * chunk
    end = cutlass.min(begin + chunk, seq_len)

    ld = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)

    # This lane's 8 dims of every query head, in float32.
    rQ = cute.make_rmem_tensor(cute.make_layout((VEC, heads)), Float32)
    rTmp = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    for h in cutlass.range_constexpr(heads):
        cute.copy(ld, cute.local_tile(mQ[b, h, None], (VEC,), (lane,)), rTmp)
        rQ[None, h].store(rTmp.load().to(Float32))

    rM = cute.make_rmem_tensor(cute.make_layout((heads,)), Float32)
    rL = cute.make_rmem_tensor(cute.make_layout((heads,)), Float32)
    rAcc = cute.make_rmem_tensor(cute.make_layout((VEC, heads)), Float32)
    rM.fill(NEG_BIG)
    rL.fill(0.0)
    rAcc.fill(0.0)

    rK = cute.make_rmem_tensor(cute.make_layout((VEC, TOKENS)), BFloat16)
    rV = cute.make_rmem_tensor(cute.make_layout((VEC, TOKENS)), BFloat16)
    step = GROUPS * TOKENS
    for base in range(begin, end, step):
        # Issue all loads of this step first.
        for u in cutlass.range_constexpr(TOKENS):
            t = base + group * TOKENS + u
            page = Int32(0)
            if t < end:
                page = mIndices[seq_start + t]
            cute.copy(ld, cute.local_tile(mK[page, None], (VEC,), (lane,)), rK[None, u])
            cute.copy(ld, cute.local_tile(mV[page, None], (VEC,), (lane,)), rV[None, u])
        for u in cutlass.range_constexpr(TOKENS):
            valid = base + group * TOKENS + u < end
            k = rK[None, u].load().to(Float32)
            v = rV[None, u].load().to(Float32)
            for h in cutlass.range_constexpr(heads):
                s = (rQ[None, h].load() * k).reduce(cute.ReductionOp.ADD, Float32(0.0), 0)
                s = cute.arch.warp_reduction_sum(s, threads_in_group=LANES) * scale_log2
                s = cutlass.select_(valid, s, Float32(-math.inf))
                m_new = cute.arch.fmax(rM[h], s)
                correction = cute.math.exp2(rM[h] - m_new, fastmath=True)
                p = cute.math.exp2(s - m_new, fastmath=True)
                rL[h] = rL[h] * correction + p
                rAcc[None, h].store(rAcc[None, h].load() * correction + v * p)
                rM[h] = m_new

    # Merge the GROUPS states of this CTA through shared memory.
    smem = cutlass.utils.SmemAllocator()
    sAcc = smem.allocate_tensor(Float32, cute.make_layout((HEAD_DIM, heads, GROUPS)), 16)
    sM = smem.allocate_tensor(Float32, cute.make_layout((heads, GROUPS)), 16)
    sL = smem.allocate_tensor(Float32, cute.make_layout((heads, GROUPS)), 16)
    for h in cutlass.range_constexpr(heads):
        mine = cute.local_tile(sAcc[None, h, group], (VEC,), (lane,))
        mine.store(rAcc[None, h].load())
        if lane == 0:
            sM[h, group] = rM[h]
            sL[h, group] = rL[h]
    cute.arch.barrier()

    d = tidx  # one output dim per thread
    for h in cutlass.range_constexpr(heads):
        m = sM[h, 0]
        for g in cutlass.range_constexpr(1, GROUPS):
            m = cute.arch.fmax(m, sM[h, g])
        total = Float32(0.0)
        acc = Float32(0.0)
        for g in cutlass.range_constexpr(GROUPS):
            w = cute.math.exp2(sM[h, g] - m, fastmath=True)
            total = total + sL[h, g] * w
            acc = acc + sAcc[d, h, g] * w
        mPartAcc[b, split, h, d] = acc
        if d == 0:
            mPartM[b, split, h] = m
            mPartL[b, split, h] = total


@cute.kernel
def _merge_kernel(
    mPartAcc: cute.Tensor,
    mPartM: cute.Tensor,
    mPartL: cute.Tensor,
    mOut: cute.Tensor,  # (batch, heads, 128) bf16
    mLse: cute.Tensor,  # (batch, heads) f32
    heads: cutlass.Constexpr[int],
):
    d, _, _ = cute.arch.thread_idx()
    b, _, _ = cute.arch.block_idx()
    for h in cutlass.range_constexpr(heads):
        m = mPartM[b, 0, h]
        for s in cutlass.range_constexpr(1, SPLITS):
            m = cute.arch.fmax(m, mPartM[b, s, h])
        total = Float32(0.0)
        acc = Float32(0.0)
        for s in cutlass.range_constexpr(SPLITS):
            w = cute.math.exp2(mPartM[b, s, h] - m, fastmath=True)
            total = total + mPartL[b, s, h] * w
            acc = acc + mPartAcc[b, s, h, d] * w
        mOut[b, h, d] = (acc / total).to(BFloat16)
        if d == 0:
            mLse[b, h] = m + cute.math.log2(total, fastmath=True)


@cute.jit
def _decode(
    mQ: cute.Tensor,
    mKCache: cute.Tensor,
    mVCache: cute.Tensor,
    mIndptr: cute.Tensor,
    mIndices: cute.Tensor,
    mOut: cute.Tensor,
    mLse: cute.Tensor,
    mPartAcc: cute.Tensor,
    mPartM: cute.Tensor,
    mPartL: cute.Tensor,
    mScale: cute.Tensor,
    stream: cuda.CUstream,
):
    batch, heads = mQ.shape[0], mQ.shape[1]
    pages = mKCache.shape[0]
    rows = cute.make_layout((pages, HEAD_DIM), stride=(HEAD_DIM, 1))  # page size 1, 1 KV head
    k = cute.make_tensor(mKCache.iterator, rows)
    v = cute.make_tensor(mVCache.iterator, rows)
    _partial_kernel(mQ, k, v, mIndptr, mIndices, mPartAcc, mPartM, mPartL, mScale, heads).launch(
        grid=(batch, SPLITS, 1), block=(THREADS, 1, 1), stream=stream
    )
    _merge_kernel(mPartAcc, mPartM, mPartL, mOut, mLse, heads).launch(
        grid=(batch, 1, 1), block=(HEAD_DIM, 1, 1), stream=stream
    )


_compiled = {}


def _compile(batch, heads, pages, tokens):
    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    cache = fake(BFloat16, (pages, 1, 1, HEAD_DIM), 16)
    return cute.compile(
        _decode,
        fake(BFloat16, (batch, heads, HEAD_DIM), 16),
        cache,
        cache,
        fake(Int32, (batch + 1,)),
        fake(Int32, (tokens,)),
        fake(BFloat16, (batch, heads, HEAD_DIM), 16),
        fake(Float32, (batch, heads)),
        fake(Float32, (batch, SPLITS, heads, HEAD_DIM), 16),
        fake(Float32, (batch, SPLITS, heads)),
        fake(Float32, (batch, SPLITS, heads)),
        fake(Float32, (1,)),
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def _scale_tensor(sm_scale, device):
    # sm_scale * log2(e) on the device, for base-2 logits: built once per (value, device).
    key = (float(sm_scale), str(device))
    t = _scales.get(key)
    if t is None:
        t = _scales[key] = torch.tensor([float(sm_scale) * LOG2E], dtype=torch.float32, device=device)
    return t


_scales = {}


def solve(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    batch, heads, dim = q.shape
    if dim != HEAD_DIM or k_cache.shape[1] != 1 or k_cache.shape[2] != 1:
        raise ValueError("expects head_dim 128, page size 1 and one KV head")
    key = (batch, heads, k_cache.shape[0], kv_indices.shape[0], q.device)
    cached = _compiled.get(key)
    if cached is None:
        # The split partials are scratch, fully rewritten by every call: allocated once.
        scratch = (
            torch.empty(batch, SPLITS, heads, HEAD_DIM, dtype=torch.float32, device=q.device),
            torch.empty(batch, SPLITS, heads, dtype=torch.float32, device=q.device),
            torch.empty(batch, SPLITS, heads, dtype=torch.float32, device=q.device),
        )
        cached = _compiled[key] = (_compile(*key[:4]), scratch)
    fn, scratch = cached
    out = torch.empty_like(q)
    lse = torch.empty(batch, heads, dtype=torch.float32, device=q.device)
    fn(q, k_cache, v_cache, kv_indptr, kv_indices, out, lse, *scratch, _scale_tensor(sm_scale, q.device))
    return out, lse
