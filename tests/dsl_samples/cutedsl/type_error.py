"""A kernel.py for problem 28 (fused add + RMSNorm, small workload) with a DSL type error: the
float32 result is stored into a bf16 register fragment without .to(BFloat16). Python accepts
the file; only the CuTe DSL, while tracing the kernel, rejects the store (line marked below)."""

import cuda.bindings.driver as cuda
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

THREADS = 32  # one warp per row: hidden 256 = 32 threads x 8 bf16


@cute.kernel
def rmsnorm_kernel(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mO: cute.Tensor,
                   mS: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    hidden = mX.shape[1]
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
    tiled = cute.make_tiled_copy_tv(atom, cute.make_layout((1, THREADS)), cute.make_layout((1, 8)))
    thr = tiled.get_slice(tidx)
    gX = thr.partition_S(cute.local_tile(mX, (1, hidden), (row, 0)))
    gR = thr.partition_S(cute.local_tile(mR, (1, hidden), (row, 0)))
    gO = thr.partition_D(cute.local_tile(mO, (1, hidden), (row, 0)))
    gS = thr.partition_D(cute.local_tile(mS, (1, hidden), (row, 0)))
    gW = thr.partition_S(cute.make_tensor(mW.iterator, cute.make_layout((1, hidden), stride=(0, 1))))
    rX, rR, rW = cute.make_fragment_like(gX), cute.make_fragment_like(gR), cute.make_fragment_like(gW)
    cute.copy(atom, gX, rX)
    cute.copy(atom, gR, rR)
    cute.copy(atom, gW, rW)
    s = rX.load().to(Float32) + rR.load().to(Float32)
    rS = cute.make_fragment_like(rX)
    rS.store(s.to(BFloat16))
    cute.copy(atom, rS, gS)
    ss = cute.arch.warp_reduction_sum((s * s).reduce(cute.ReductionOp.ADD, Float32(0.0), 0))
    inv_rms = cute.math.rsqrt(ss / hidden + 1e-5, fastmath=True)
    rO = cute.make_fragment_like(rX)
    rO.store(s * inv_rms * rW.load().to(Float32))  # expected error: float32 into a bf16 fragment
    cute.copy(atom, rO, gO)


@cute.jit
def rmsnorm(mX: cute.Tensor, mR: cute.Tensor, mW: cute.Tensor, mO: cute.Tensor, mS: cute.Tensor,
            stream: cuda.CUstream):
    rmsnorm_kernel(mX, mR, mW, mO, mS).launch(grid=(mX.shape[0], 1, 1), block=(THREADS, 1, 1),
                                              stream=stream)


_compiled = {}


def solve(x, residual, weight):
    tokens, hidden = x.shape
    if (tokens, hidden) not in _compiled:
        act = make_fake_compact_tensor(BFloat16, (tokens, hidden), stride_order=(1, 0),
                                       assumed_align=16)
        w = make_fake_compact_tensor(BFloat16, (hidden,), assumed_align=16)
        _compiled[tokens, hidden] = cute.compile(
            rmsnorm, act, act, w, act, act, make_fake_stream(use_tvm_ffi_env_stream=True),
            options="--enable-tvm-ffi")
    out, residual_out = torch.empty_like(x), torch.empty_like(residual)
    _compiled[tokens, hidden](x, residual, weight, out, residual_out)
    return out, residual_out
