"""DeltaNet delta-rule recurrence (16 heads of 128, from a float32 state) in CuTe DSL.

One CTA per (sequence, head) keeps the 128 x 128 float32 state in registers for the whole
sequence: 512 threads, thread t owns value column j = t // 4 and key rows 32p .. 32p + 31 of it
(p = t % 4), 32 registers. Per token, with q and k L2-normalised (q also scaled by 128^-0.5):

    u_j = k . S[:, j],  w_j = q . S[:, j]      (32 products per thread, then 2 shuffles over
                                               the 4 threads of the column)
    d_j = beta (v_j - u_j),  S[:, j] += d_j k,  o_j = q . S_new[:, j] = w_j + d_j (q . k)

so the state is read and written once per token, in registers, and never leaves the chip until
the end. Tokens come in blocks of TB: the CTA loads the block's q, k, v (one 128-bit load each
per thread, 16 threads per token), normalises q and k with 16-lane butterfly reductions, and
stages them in shared memory as float32 (rows padded so that the 4 key-row parts of a warp's
128-bit reads fall in distinct banks), with beta and q . k per token; then every thread runs the
block's tokens in order from shared memory. o_j is written by the p = 0 thread of each column.
The reference runs ~8 PyTorch kernels per token over [8, 16, 128, 128] tensors.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import torch
from cutlass import BFloat16, Float32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

HEAD = 128  # key and value dims
PARTS = 4  # threads per value column
ROWS = HEAD // PARTS  # key rows per thread: 32
THREADS = HEAD * PARTS  # 512
TB = 32  # tokens per block staged in shared memory
PADDED = PARTS * (ROWS + 4)  # 144 floats per staged q / k row: part p starts at 36 p
VEC = 8  # bf16 per 128-bit load
LANES_PER_TOKEN = HEAD // VEC  # 16
NORM_EPS = 1e-12  # F.normalize


@cute.kernel
def _delta_kernel(
    mQ: cute.Tensor,  # (batch, heads, T, 128) bf16
    mK: cute.Tensor,
    mV: cute.Tensor,
    mBeta: cute.Tensor,  # (batch, heads, T) bf16
    mS0: cute.Tensor,  # (batch, heads, 128, 128) f32
    mO: cute.Tensor,  # (batch, heads, T, 128) bf16
    mS: cute.Tensor,  # (batch, heads, 128, 128) f32
):
    tidx, _, _ = cute.arch.thread_idx()
    bh, _, _ = cute.arch.block_idx()
    heads, steps = mQ.shape[1], mQ.shape[2]
    b = bh // heads
    h = bh % heads
    j = tidx // PARTS  # value column
    p = tidx % PARTS  # key rows 32 p .. 32 p + 31

    smem = cutlass.utils.SmemAllocator()
    rows = cute.make_layout((TB, PADDED), stride=(PADDED, 1))  # row-major
    sQ = smem.allocate_tensor(Float32, rows, 16)
    sK = smem.allocate_tensor(Float32, rows, 16)
    sV = smem.allocate_tensor(BFloat16, cute.make_layout((TB, HEAD), stride=(HEAD, 1)), 16)
    sBeta = smem.allocate_tensor(Float32, cute.make_layout((TB,)), 16)
    sQK = smem.allocate_tensor(Float32, cute.make_layout((TB,)), 16)

    rS = cute.make_rmem_tensor(cute.make_layout((ROWS,)), Float32)
    for r in cutlass.range_constexpr(ROWS):
        rS[r] = mS0[b, h, p * ROWS + r, j]

    ld = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
    ld4 = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float32, num_bits_per_copy=128)
    rq = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    rk = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    rv = cute.make_rmem_tensor(cute.make_layout((VEC,)), BFloat16)
    rn = cute.make_rmem_tensor(cute.make_layout((VEC,)), Float32)
    rK = cute.make_rmem_tensor(cute.make_layout((ROWS,)), Float32)
    rQ = cute.make_rmem_tensor(cute.make_layout((4,)), Float32)

    tok = tidx // LANES_PER_TOKEN  # load phase: token of the block, 8 dims at chunk
    chunk = tidx % LANES_PER_TOKEN
    part = chunk * VEC // ROWS  # where those 8 dims sit in the padded row
    slot = part * (ROWS + 4) // 4 + chunk * VEC % ROWS // 4
    qscale = Float32(HEAD ** -0.5)

    for blk in range((steps + TB - 1) // TB):
        t0 = blk * TB
        cute.arch.barrier()  # the previous block is consumed
        rq.fill(0.0)
        rk.fill(0.0)
        rv.fill(0.0)
        if t0 + tok < steps:  # the last block may be partial: its missing tokens read as zeros
            cute.copy(ld, cute.local_tile(mQ[b, h, t0 + tok, None], (VEC,), (chunk,)), rq)
            cute.copy(ld, cute.local_tile(mK[b, h, t0 + tok, None], (VEC,), (chunk,)), rk)
            cute.copy(ld, cute.local_tile(mV[b, h, t0 + tok, None], (VEC,), (chunk,)), rv)
        q = rq.load().to(Float32)
        k = rk.load().to(Float32)
        ssq = cute.arch.warp_reduction_sum(
            (q * q).reduce(cute.ReductionOp.ADD, Float32(0.0), 0), threads_in_group=LANES_PER_TOKEN)
        ssk = cute.arch.warp_reduction_sum(
            (k * k).reduce(cute.ReductionOp.ADD, Float32(0.0), 0), threads_in_group=LANES_PER_TOKEN)
        qk = cute.arch.warp_reduction_sum(
            (q * k).reduce(cute.ReductionOp.ADD, Float32(0.0), 0), threads_in_group=LANES_PER_TOKEN)
        inv_q = qscale / cute.arch.fmax(cute.math.sqrt(ssq, fastmath=False), Float32(NORM_EPS))
        inv_k = Float32(1.0) / cute.arch.fmax(cute.math.sqrt(ssk, fastmath=False), Float32(NORM_EPS))
        rn.store(q * inv_q)
        for half in cutlass.range_constexpr(2):
            cute.copy(ld4, cute.local_tile(rn, (4,), (half,)),
                      cute.local_tile(sQ[tok, None], (4,), (slot + half,)))
        rn.store(k * inv_k)
        for half in cutlass.range_constexpr(2):
            cute.copy(ld4, cute.local_tile(rn, (4,), (half,)),
                      cute.local_tile(sK[tok, None], (4,), (slot + half,)))
        cute.copy(ld, rv, cute.local_tile(sV[tok, None], (VEC,), (chunk,)))
        if chunk == 0:
            sQK[tok] = qk * inv_q * inv_k
        if tidx < TB:
            beta = Float32(0.0)
            if t0 + tidx < steps:
                beta = mBeta[b, h, t0 + tidx].to(Float32)
            sBeta[tidx] = beta
        cute.arch.barrier()

        for tt in range(cutlass.min(TB, steps - t0)):
            # k is kept for the update (32 registers); q only enters w, 4 values at a time.
            w = Float32(0.0)
            for c in cutlass.range_constexpr(ROWS // 4):
                cute.copy(ld4, cute.local_tile(sK[tt, None], (4,), (p * (ROWS + 4) // 4 + c,)),
                          cute.local_tile(rK, (4,), (c,)))
                cute.copy(ld4, cute.local_tile(sQ[tt, None], (4,), (p * (ROWS + 4) // 4 + c,)), rQ)
                w = w + (cute.local_tile(rS, (4,), (c,)).load() * rQ.load()).reduce(
                    cute.ReductionOp.ADD, Float32(0.0), 0)
            s = rS.load()
            u = (s * rK.load()).reduce(cute.ReductionOp.ADD, Float32(0.0), 0)
            u = cute.arch.warp_reduction_sum(u, threads_in_group=PARTS)
            w = cute.arch.warp_reduction_sum(w, threads_in_group=PARTS)
            d = sBeta[tt] * (sV[tt, j].to(Float32) - u)
            rS.store(s + rK.load() * d)
            if p == 0:
                mO[b, h, t0 + tt, j] = (w + d * sQK[tt]).to(BFloat16)

    for r in cutlass.range_constexpr(ROWS):
        mS[b, h, p * ROWS + r, j] = rS[r]


@cute.jit
def _delta(mQ: cute.Tensor, mK: cute.Tensor, mV: cute.Tensor, mBeta: cute.Tensor, mS0: cute.Tensor,
           mO: cute.Tensor, mS: cute.Tensor, stream: cuda.CUstream):
    batch, heads = mQ.shape[0], mQ.shape[1]
    _delta_kernel(mQ, mK, mV, mBeta, mS0, mO, mS).launch(
        grid=(batch * heads, 1, 1), block=(THREADS, 1, 1), stream=stream
    )


_compiled = {}


def _compile(batch, heads, steps):
    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    rows = fake(BFloat16, (batch, heads, steps, HEAD), 16)
    state = fake(Float32, (batch, heads, HEAD, HEAD), 16)
    return cute.compile(
        _delta, rows, rows, rows, fake(BFloat16, (batch, heads, steps)), state, rows, state,
        make_fake_stream(use_tvm_ffi_env_stream=True), options="--enable-tvm-ffi",
    )


def solve(q, k, v, beta, initial_state):
    batch, heads, steps, dim = q.shape
    if dim != HEAD or v.shape[-1] != HEAD:
        raise ValueError("expects key and value dims 128")
    key = (batch, heads, steps, q.device)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(batch, heads, steps)
    out = torch.empty_like(v)
    final_state = torch.empty_like(initial_state)
    fn(q, k, v, beta, initial_state, out, final_state)
    return out, final_state
