"""Fused residual add + RMSNorm (hidden 4096, bf16) in CuTe DSL.

One CTA normalises one token row in a single pass over memory: every thread loads its slice of
`hidden_states` and `residual` with 128-bit vector loads (8 bf16 each; chunk i of the row goes to
thread i % T, so each load instruction of a warp covers 512 contiguous bytes), adds them in
float32, reduces the sum of squares (warp shuffles, then one shared-memory slot per warp) and
writes `s * rsqrt(mean(s^2) + eps) * weight`. The row stays in registers between the two phases,
so the kernel moves exactly 2 bytes x 3 per element plus the weight (which stays in L1/L2): the
memory roofline. Eager PyTorch launches ~8 kernels, each re-reading a float32 temporary.

The kernel is compiled once per (num_tokens, hidden) with TVM-FFI, so `solve` passes torch
tensors directly (about a microsecond of host overhead) and the launch goes to torch's current
stream.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import cutlass.utils
import torch
from cutlass import BFloat16, Float32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

EPS = 1e-5
VEC = 8  # bf16 elements per 128-bit access


@cute.kernel
def _fused_add_rmsnorm_kernel(
    mX: cute.Tensor,
    mR: cute.Tensor,
    mW: cute.Tensor,
    mO: cute.Tensor,
    eps: Float32,
    num_threads: cutlass.Constexpr[int],
):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    hidden = mX.shape[1]
    num_warps = num_threads // 32

    # Thread t owns the 8-element chunks t, t + T, t + 2T, ... of the row.
    atom = cute.make_copy_atom(
        cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128
    )
    tiled = cute.make_tiled_copy_tv(
        atom, cute.make_layout((1, num_threads)), cute.make_layout((1, VEC))
    )
    thr = tiled.get_slice(tidx)

    tile = (1, hidden)
    tXgX = thr.partition_S(cute.local_tile(mX, tile, (row, 0)))  # ((8,1),1,V)
    tXgR = thr.partition_S(cute.local_tile(mR, tile, (row, 0)))
    tXgO = thr.partition_D(cute.local_tile(mO, tile, (row, 0)))
    # The weight seen as a (1, hidden) row so that it partitions like x.
    mW2 = cute.make_tensor(mW.iterator, cute.make_layout((1, hidden), stride=(0, 1)))
    tXgW = thr.partition_S(mW2)

    rX = cute.make_fragment_like(tXgX)
    rR = cute.make_fragment_like(tXgR)
    rW = cute.make_fragment_like(tXgW)
    cute.copy(atom, tXgX, rX)
    cute.copy(atom, tXgR, rR)
    cute.copy(atom, tXgW, rW)

    s = rX.load().to(Float32) + rR.load().to(Float32)

    # Sum of squares: per thread, per warp (shuffles), then across warps (shared memory).
    ss = (s * s).reduce(cute.ReductionOp.ADD, Float32(0.0), reduction_profile=0)
    ss = cute.arch.warp_reduction_sum(ss)
    if cutlass.const_expr(num_warps > 1):
        smem = cutlass.utils.SmemAllocator()
        partial = smem.allocate_tensor(Float32, cute.make_layout((num_warps,)), 16)
        # Warp and lane from plain tidx arithmetic, computed outside the branch:
        # cute.arch.warp_idx() lowers to a full-mask shfl.sync (make_warp_uniform), which
        # must never run inside `if lane == 0` (only 1 of 32 lanes would reach it: deadlock).
        warp = tidx // 32
        lane = tidx % 32
        if lane == 0:
            partial[warp] = ss
        cute.arch.barrier()  # every thread of the CTA, outside any branch
        ss = partial[0]
        for w in cutlass.range_constexpr(1, num_warps):
            ss = ss + partial[w]

    inv_rms = cute.math.rsqrt(ss / hidden + eps, fastmath=True)
    rO = cute.make_fragment_like(rX)
    rO.store((s * inv_rms * rW.load().to(Float32)).to(BFloat16))
    cute.copy(atom, rO, tXgO)


@cute.jit
def _fused_add_rmsnorm(
    mX: cute.Tensor,
    mR: cute.Tensor,
    mW: cute.Tensor,
    mO: cute.Tensor,
    stream: cuda.CUstream,
):
    hidden = mX.shape[1]
    # 256 threads (2 vectors each) for hidden 4096; narrower rows use fewer threads.
    num_threads = min(256, hidden // VEC)
    _fused_add_rmsnorm_kernel(mX, mR, mW, mO, Float32(EPS), num_threads).launch(
        grid=(mX.shape[0], 1, 1), block=(num_threads, 1, 1), stream=stream
    )


_compiled = {}


def _compile(num_tokens, hidden):
    if hidden % (VEC * 32) != 0 or (hidden // VEC) % min(256, hidden // VEC) != 0:
        raise ValueError(f"hidden={hidden} must be a multiple of {VEC * 32}")

    def row_major(shape):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(BFloat16, shape, stride_order=order, assumed_align=16)

    act = row_major((num_tokens, hidden))
    return cute.compile(
        _fused_add_rmsnorm,
        act,
        act,
        row_major((hidden,)),
        act,
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(hidden_states, residual, weight):
    key = tuple(hidden_states.shape)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    out = torch.empty_like(hidden_states)
    fn(hidden_states, residual, weight, out)
    return out
