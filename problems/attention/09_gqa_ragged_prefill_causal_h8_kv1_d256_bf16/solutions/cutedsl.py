"""GQA causal ragged prefill (8 query heads on 1 KV head, head 256, base-2 LSE) in CuTe DSL.

The sequences are short (at most 166 keys), so each query token is computed like a decode step
over its own visible keys: one kernel, grid (total_q, kv_heads), 128 threads.

CTA (r, g) first finds query token r's sequence b by scanning qo_indptr (batch + 1 offsets);
query i = r - qo_indptr[b] of a sequence with n_q queries and n_kv keys sees the keys
kv_indptr[b] + 0 .. i + n_kv - n_q. Its 4 groups of 32 lanes each take TOKENS keys per step; a
lane holds 8 of the 256 dims (one 128-bit load of K and of V per key), so a K/V row is read once
per query and serves the 8 query heads of its KV head. Per key and head the dot product is
reduced over the 32 lanes with butterfly shuffles; the group keeps an online softmax (running
max m, sum l, accumulator over V) in base 2 (logits scaled by sm_scale * log2 e; sm_scale, the
call's argument, reaches the kernel as a one-element float32 tensor). The 4 group states are
merged through shared memory and the CTA writes out = acc / l in bf16 and lse = m + log2(l).

Keys past the end are loaded from the sequence's first key (always valid) and masked with a -inf
logit; running maxima start at -1e30 (finite) so that masked or empty groups contribute exactly
0 without NaNs. The eager reference loops over the 63 sequences in Python.
"""

import math

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import torch
from cutlass import BFloat16, Float32, Int32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

HEAD_DIM = 256
LOG2E = 1.4426950408889634
THREADS = 128
LANES = 32  # lanes per key: 32 x 8 dims
VEC = HEAD_DIM // LANES
GROUPS = THREADS // LANES
TOKENS = 2  # keys a group loads per step (2 x TOKENS 128-bit loads in flight per lane)
NEG_BIG = -1.0e30


@cute.kernel
def _rows_kernel(
    mQ: cute.Tensor,  # (total_q, heads, 256) bf16
    mK: cute.Tensor,  # (total_kv, kv_heads, 256) bf16
    mV: cute.Tensor,
    mQoIndptr: cute.Tensor,  # (batch + 1,) int32
    mKvIndptr: cute.Tensor,  # (batch + 1,) int32
    mOut: cute.Tensor,  # (total_q, heads, 256) bf16
    mLse: cute.Tensor,  # (total_q, heads) f32
    mScale: cute.Tensor,  # (1,) f32: sm_scale * log2(e), logits in base 2
    batch: cutlass.Constexpr[int],
    group: cutlass.Constexpr[int],  # query heads per KV head
):
    tidx, _, _ = cute.arch.thread_idx()
    r, kh, _ = cute.arch.block_idx()
    scale_log2 = mScale[0]
    key_group = tidx // LANES
    lane = tidx % LANES

    # The sequence of query token r: the last b with qo_indptr[b] <= r.
    seq = Int32(0)
    for j in range(1, batch):
        if mQoIndptr[j] <= r:
            seq = Int32(j)
    first = mKvIndptr[seq]
    n_q = mQoIndptr[seq + 1] - mQoIndptr[seq]
    n_kv = mKvIndptr[seq + 1] - first
    end = n_kv - n_q + (r - mQoIndptr[seq]) + 1  # keys first .. first + end - 1 are visible

    ld = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)

    # This lane's 8 dims of every query head of the group, in float32.
    rQ = cute.make_rmem_tensor(cute.make_layout((VEC, group)), Float32)
    rTmp = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    for h in cutlass.range_constexpr(group):
        cute.copy(ld, cute.local_tile(mQ[r, kh * group + h, None], (VEC,), (lane,)), rTmp)
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
    for base in range(0, end, step):
        # Issue all loads of this step first.
        for u in cutlass.range_constexpr(TOKENS):
            t = base + key_group * TOKENS + u
            row = first
            if t < end:
                row = first + t
            cute.copy(ld, cute.local_tile(mK[row, kh, None], (VEC,), (lane,)), rK[None, u])
            cute.copy(ld, cute.local_tile(mV[row, kh, None], (VEC,), (lane,)), rV[None, u])
        for u in cutlass.range_constexpr(TOKENS):
            valid = base + key_group * TOKENS + u < end
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

    # Merge the GROUPS states through shared memory and write the query token's heads.
    smem = cutlass.utils.SmemAllocator()
    sAcc = smem.allocate_tensor(Float32, cute.make_layout((HEAD_DIM, group, GROUPS)), 16)
    sM = smem.allocate_tensor(Float32, cute.make_layout((group, GROUPS)), 16)
    sL = smem.allocate_tensor(Float32, cute.make_layout((group, GROUPS)), 16)
    for h in cutlass.range_constexpr(group):
        mine = cute.local_tile(sAcc[None, h, key_group], (VEC,), (lane,))
        mine.store(rAcc[None, h].load())
        if lane == 0:
            sM[h, key_group] = rM[h]
            sL[h, key_group] = rL[h]
    cute.arch.barrier()

    for h in cutlass.range_constexpr(group):
        m = sM[h, 0]
        for g in cutlass.range_constexpr(1, GROUPS):
            m = cute.arch.fmax(m, sM[h, g])
        total = Float32(0.0)
        for g in cutlass.range_constexpr(GROUPS):
            total = total + sL[h, g] * cute.math.exp2(sM[h, g] - m, fastmath=True)
        for dd in cutlass.range_constexpr(HEAD_DIM // THREADS):
            d = dd * THREADS + tidx  # two output dims per thread
            acc = Float32(0.0)
            for g in cutlass.range_constexpr(GROUPS):
                acc = acc + sAcc[d, h, g] * cute.math.exp2(sM[h, g] - m, fastmath=True)
            mOut[r, kh * group + h, d] = (acc / total).to(BFloat16)
        if tidx == 0:
            mLse[r, kh * group + h] = m + cute.math.log2(total, fastmath=True)


@cute.jit
def _prefill(
    mQ: cute.Tensor,
    mK: cute.Tensor,
    mV: cute.Tensor,
    mQoIndptr: cute.Tensor,
    mKvIndptr: cute.Tensor,
    mOut: cute.Tensor,
    mLse: cute.Tensor,
    mScale: cute.Tensor,
    stream: cuda.CUstream,
):
    total_q, heads = mQ.shape[0], mQ.shape[1]
    kv_heads = mK.shape[1]
    batch = mQoIndptr.shape[0] - 1
    _rows_kernel(mQ, mK, mV, mQoIndptr, mKvIndptr, mOut, mLse, mScale, batch,
                 heads // kv_heads).launch(grid=(total_q, kv_heads, 1), block=(THREADS, 1, 1), stream=stream)


_compiled = {}


def _compile(total_q, total_kv, heads, kv_heads, batch):
    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    return cute.compile(
        _prefill,
        fake(BFloat16, (total_q, heads, HEAD_DIM), 16),
        fake(BFloat16, (total_kv, kv_heads, HEAD_DIM), 16),
        fake(BFloat16, (total_kv, kv_heads, HEAD_DIM), 16),
        fake(Int32, (batch + 1,)),
        fake(Int32, (batch + 1,)),
        fake(BFloat16, (total_q, heads, HEAD_DIM), 16),
        fake(Float32, (total_q, heads)),
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


def solve(q, k, v, qo_indptr, kv_indptr, sm_scale):
    total_q, heads, dim = q.shape
    kv_heads = k.shape[1]
    if dim != HEAD_DIM or heads % kv_heads:
        raise ValueError("expects head_dim 256 and whole GQA groups")
    key = (total_q, k.shape[0], heads, kv_heads, qo_indptr.shape[0] - 1, q.device)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key[:5])
    out = torch.empty_like(q)
    lse = torch.empty(total_q, heads, dtype=torch.float32, device=q.device)
    fn(q, k, v, qo_indptr, kv_indptr, out, lse, _scale_tensor(sm_scale, q.device))
    return out, lse
