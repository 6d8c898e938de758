"""GQA paged decode (32 query heads on 8 KV heads, head 128, page size 64) in CuTe DSL.

Split-K flash decoding in two kernels:

1. `_partial_kernel`, grid (batch, SPLITS, kv_heads), 128 threads: CTA (b, s, g) takes the s-th
   of SPLITS equal token ranges of sequence b for KV head g. Sequence b has (pages - 1) * 64 +
   kv_last_page_len[b] tokens; token t is slot t % 64 of page kv_indices[kv_indptr[b] + t // 64]
   (the cache is viewed as (pages * 64, 8, 128) rows). The CTA's 8 groups of 16 lanes each take
   TOKENS tokens per step; a lane holds 8 of the 128 dims (one 128-bit load of K and of V per
   token), so a K/V row is read once and serves the 4 query heads of its KV head. Per token and
   head the dot product is reduced over the 16 lanes with butterfly shuffles; the group keeps an
   online softmax (running max m, sum l, accumulator over V) in base 2 (logits scaled by
   sm_scale * log2 e; sm_scale, the call's argument, reaches the kernel as a one-element float32
   tensor). The 8 group states are merged through shared memory into one partial per head.
2. `_merge_kernel`, grid (batch, heads), 128 threads (one per dim): rescales the SPLITS partials
   to their common max, writes out = acc / l in bf16 and lse = m + log2(l), the base-2 LSE.

Tokens past the end of a range are loaded from slot 0 (always valid) and masked with a -inf
logit; running maxima start at -1e30 (finite) so that masked or empty ranges contribute exactly
0 without NaNs. K and V (7.1 GB) are read once from HBM: memory bound. Eager PyTorch loops over
the batch in Python.
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
SPLITS = 32  # token ranges per sequence and KV head (CTAs per sequence and KV head)
PAGE_SIZE = 64
THREADS = 128
LANES = 16  # lanes per token: 16 x 8 dims
VEC = HEAD_DIM // LANES
GROUPS = THREADS // LANES
TOKENS = 4  # tokens a group loads per step (2 x TOKENS 128-bit loads in flight per lane)
NEG_BIG = -1.0e30


@cute.kernel
def _partial_kernel(
    mQ: cute.Tensor,  # (batch, heads, 128) bf16
    mK: cute.Tensor,  # (pages * 64, kv_heads, 128) bf16: token rows
    mV: cute.Tensor,
    mIndptr: cute.Tensor,  # (batch + 1,) offsets into mIndices, in pages
    mIndices: cute.Tensor,
    mLastLen: cute.Tensor,  # (batch,) tokens in each sequence's last page
    mPartAcc: cute.Tensor,  # (batch, SPLITS, heads, 128) f32
    mPartM: cute.Tensor,  # (batch, SPLITS, heads) f32
    mPartL: cute.Tensor,
    mScale: cute.Tensor,  # (1,) f32: sm_scale * log2(e), logits in base 2
    group: cutlass.Constexpr[int],  # query heads per KV head
):
    tidx, _, _ = cute.arch.thread_idx()
    b, split, kh = cute.arch.block_idx()
    scale_log2 = mScale[0]
    lanes_group = tidx // LANES
    lane = tidx % LANES

    first_page = mIndptr[b]
    seq_len = (mIndptr[b + 1] - first_page - 1) * PAGE_SIZE + mLastLen[b]
    chunk = (seq_len + SPLITS - 1) // SPLITS
    begin = split * chunk
    end = cutlass.min(begin + chunk, seq_len)

    ld = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)

    # This lane's 8 dims of every query head, in float32.
    rQ = cute.make_rmem_tensor(cute.make_layout((VEC, group)), Float32)
    rTmp = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    for h in cutlass.range_constexpr(group):
        cute.copy(ld, cute.local_tile(mQ[b, kh * group + h, None], (VEC,), (lane,)), rTmp)
        rQ[None, h].store(rTmp.load().to(Float32))

    rM = cute.make_rmem_tensor(cute.make_layout((group,)), Float32)
    rL = cute.make_rmem_tensor(cute.make_layout((group,)), Float32)
    rAcc = cute.make_rmem_tensor(cute.make_layout((VEC, group)), Float32)
    rM.fill(NEG_BIG)
    rL.fill(0.0)
    rAcc.fill(0.0)

    rK = cute.make_rmem_tensor(cute.make_layout((VEC, TOKENS)), BFloat16)
    rV = cute.make_rmem_tensor(cute.make_layout((VEC, TOKENS)), BFloat16)
    step = GROUPS * TOKENS
    for base in range(begin, end, step):
        # Issue all loads of this step first.
        for u in cutlass.range_constexpr(TOKENS):
            t = base + lanes_group * TOKENS + u
            slot = Int32(0)
            if t < end:
                slot = mIndices[first_page + t // PAGE_SIZE] * PAGE_SIZE + t % PAGE_SIZE
            cute.copy(ld, cute.local_tile(mK[slot, kh, None], (VEC,), (lane,)), rK[None, u])
            cute.copy(ld, cute.local_tile(mV[slot, kh, None], (VEC,), (lane,)), rV[None, u])
        for u in cutlass.range_constexpr(TOKENS):
            valid = base + lanes_group * TOKENS + u < end
            k = rK[None, u].load().to(Float32)
            v = rV[None, u].load().to(Float32)
            for h in cutlass.range_constexpr(group):
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
    sAcc = smem.allocate_tensor(Float32, cute.make_layout((HEAD_DIM, group, GROUPS)), 16)
    sM = smem.allocate_tensor(Float32, cute.make_layout((group, GROUPS)), 16)
    sL = smem.allocate_tensor(Float32, cute.make_layout((group, GROUPS)), 16)
    for h in cutlass.range_constexpr(group):
        mine = cute.local_tile(sAcc[None, h, lanes_group], (VEC,), (lane,))
        mine.store(rAcc[None, h].load())
        if lane == 0:
            sM[h, lanes_group] = rM[h]
            sL[h, lanes_group] = rL[h]
    cute.arch.barrier()

    d = tidx  # one output dim per thread
    for h in cutlass.range_constexpr(group):
        m = sM[h, 0]
        for g in cutlass.range_constexpr(1, GROUPS):
            m = cute.arch.fmax(m, sM[h, g])
        total = Float32(0.0)
        acc = Float32(0.0)
        for g in cutlass.range_constexpr(GROUPS):
            w = cute.math.exp2(sM[h, g] - m, fastmath=True)
            total = total + sL[h, g] * w
            acc = acc + sAcc[d, h, g] * w
        mPartAcc[b, split, kh * group + h, d] = acc
        if d == 0:
            mPartM[b, split, kh * group + h] = m
            mPartL[b, split, kh * group + h] = total


@cute.kernel
def _merge_kernel(
    mPartAcc: cute.Tensor,
    mPartM: cute.Tensor,
    mPartL: cute.Tensor,
    mOut: cute.Tensor,  # (batch, heads, 128) bf16
    mLse: cute.Tensor,  # (batch, heads) f32
):
    d, _, _ = cute.arch.thread_idx()
    b, h, _ = cute.arch.block_idx()
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
    mLastLen: cute.Tensor,
    mOut: cute.Tensor,
    mLse: cute.Tensor,
    mPartAcc: cute.Tensor,
    mPartM: cute.Tensor,
    mPartL: cute.Tensor,
    mScale: cute.Tensor,
    stream: cuda.CUstream,
):
    batch, heads = mQ.shape[0], mQ.shape[1]
    pages, kv_heads = mKCache.shape[0], mKCache.shape[2]
    # Token rows: (page * 64 + slot, kv head, dim) of the (pages, 64, kv_heads, 128) cache.
    rows = cute.make_layout((pages * PAGE_SIZE, kv_heads, HEAD_DIM),
                            stride=(kv_heads * HEAD_DIM, HEAD_DIM, 1))
    k = cute.make_tensor(mKCache.iterator, rows)
    v = cute.make_tensor(mVCache.iterator, rows)
    group = heads // kv_heads
    _partial_kernel(mQ, k, v, mIndptr, mIndices, mLastLen, mPartAcc, mPartM, mPartL, mScale,
                    group).launch(grid=(batch, SPLITS, kv_heads), block=(THREADS, 1, 1), stream=stream)
    _merge_kernel(mPartAcc, mPartM, mPartL, mOut, mLse).launch(
        grid=(batch, heads, 1), block=(HEAD_DIM, 1, 1), stream=stream
    )


_compiled = {}


def _compile(batch, heads, pages, kv_heads, used_pages):
    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    cache = fake(BFloat16, (pages, PAGE_SIZE, kv_heads, HEAD_DIM), 16)
    return cute.compile(
        _decode,
        fake(BFloat16, (batch, heads, HEAD_DIM), 16),
        cache,
        cache,
        fake(Int32, (batch + 1,)),
        fake(Int32, (used_pages,)),
        fake(Int32, (batch,)),
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


def solve(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, sm_scale):
    batch, heads, dim = q.shape
    pages, page_size, kv_heads, _ = k_cache.shape
    if dim != HEAD_DIM or page_size != PAGE_SIZE or heads % kv_heads:
        raise ValueError("expects head_dim 128, page size 64 and whole GQA groups")
    key = (batch, heads, pages, kv_heads, kv_indices.shape[0], q.device)
    cached = _compiled.get(key)
    if cached is None:
        # The split partials are scratch, fully rewritten by every call: allocated once.
        scratch = (
            torch.empty(batch, SPLITS, heads, HEAD_DIM, dtype=torch.float32, device=q.device),
            torch.empty(batch, SPLITS, heads, dtype=torch.float32, device=q.device),
            torch.empty(batch, SPLITS, heads, dtype=torch.float32, device=q.device),
        )
        cached = _compiled[key] = (_compile(*key[:5]), scratch)
    fn, scratch = cached
    out = torch.empty_like(q)
    lse = torch.empty(batch, heads, dtype=torch.float32, device=q.device)
    fn(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, out, lse, *scratch,
       _scale_tensor(sm_scale, q.device))
    return out, lse
