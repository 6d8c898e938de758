"""Problem 36 with the shipped CuTe DSL kernel running on every call, its result written to a
scratch buffer nobody reads, and eager PyTorch computing the output: the DSL rule's knockout
draw (the DSL's launches replaced by a no-op) finds the outputs still correct."""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float32
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

EPS = 1e-6
VEC = 8  # bf16 elements per 128-bit access
THREADS = 256
ROWS_PER_THREAD = 4


@cute.kernel
def _rmsnorm_kernel(
    mX: cute.Tensor,
    mW: cute.Tensor,
    mO: cute.Tensor,
    eps: Float32,
    threads_per_row: cutlass.Constexpr[int],
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    num_rows, hidden = mX.shape
    rows_per_pass = THREADS // threads_per_row
    tile = (rows_per_pass * ROWS_PER_THREAD, hidden)

    # Thread t: row t // threads_per_row of each 16-row slab, chunk t % threads_per_row.
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
    thr_layout = cute.make_ordered_layout((rows_per_pass, threads_per_row), order=(1, 0))
    tiled = cute.make_tiled_copy_tv(atom, thr_layout, cute.make_layout((1, VEC)))
    thr = tiled.get_slice(tidx)

    tXgX = thr.partition_S(cute.local_tile(mX, tile, (bidx, 0)))  # ((8,1),ROWS,1)
    tXgO = thr.partition_D(cute.local_tile(mO, tile, (bidx, 0)))
    coords = cute.local_tile(cute.make_identity_tensor(mX.shape), tile, (bidx, 0))
    tXcX = thr.partition_S(coords)
    # The weight as a (rows_per_pass, hidden) tile with row stride 0: one chunk per thread.
    mW2 = cute.make_tensor(mW.iterator, cute.make_layout((rows_per_pass, hidden), stride=(0, 1)))
    tXgW = thr.partition_S(mW2)  # ((8,1),1,1)
    rW = cute.make_fragment_like(tXgW)
    cute.copy(atom, tXgW, rW)
    w = rW.load().to(Float32)

    rX = cute.make_fragment_like(tXgX)
    rX.fill(0.0)
    for m in cutlass.range_constexpr(ROWS_PER_THREAD):
        if tXcX[(0, 0), m, 0][0] < num_rows:
            cute.copy(atom, tXgX[None, m, None], rX[None, m, None])

    rO = cute.make_fragment_like(rX)
    for m in cutlass.range_constexpr(ROWS_PER_THREAD):
        x = rX[None, m, None].load().to(Float32)
        ss = (x * x).reduce(cute.ReductionOp.ADD, Float32(0.0), reduction_profile=0)
        ss = cute.arch.warp_reduction_sum(ss, threads_in_group=threads_per_row)
        inv_rms = cute.math.rsqrt(ss / hidden + eps, fastmath=True)
        rO[None, m, None].store((x * inv_rms * w).to(BFloat16))

    for m in cutlass.range_constexpr(ROWS_PER_THREAD):
        if tXcX[(0, 0), m, 0][0] < num_rows:
            cute.copy(atom, rO[None, m, None], tXgO[None, m, None])


@cute.jit
def _rmsnorm(mX: cute.Tensor, mW: cute.Tensor, mO: cute.Tensor, stream: cuda.CUstream):
    num_rows, hidden = mX.shape
    threads_per_row = hidden // VEC
    rows_per_cta = (THREADS // threads_per_row) * ROWS_PER_THREAD
    _rmsnorm_kernel(mX, mW, mO, Float32(EPS), threads_per_row).launch(
        grid=(cute.ceil_div(num_rows, rows_per_cta), 1, 1),
        block=(THREADS, 1, 1),
        stream=stream,
    )


_compiled = {}


def _compile(num_rows, hidden):
    if hidden % VEC != 0 or 32 % (hidden // VEC) != 0:
        raise ValueError(f"hidden={hidden}: rows must be 8, 16, ..., 256 elements long")
    rows = make_fake_compact_tensor(BFloat16, (num_rows, hidden), stride_order=(1, 0), assumed_align=16)
    weight = make_fake_compact_tensor(BFloat16, (hidden,), assumed_align=16)
    return cute.compile(
        _rmsnorm,
        rows,
        weight,
        rows,
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(hidden_states, weight):
    key = tuple(hidden_states.shape)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    scratch = torch.empty_like(hidden_states)
    fn(hidden_states, weight, scratch)  # the DSL's result, discarded
    x = hidden_states.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()
    return out.to(hidden_states.dtype)
