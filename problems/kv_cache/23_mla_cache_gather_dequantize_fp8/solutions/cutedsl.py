"""vLLM gather_and_maybe_dequant_cache (MLA cache gather, FP8 codes to float32) in CuTe DSL.

One kernel: a CTA of 144 x 4 threads fills 4 output rows. For row i the threads find its
request r -- the number of requests whose rows end at or before i, from an unrolled pass over
seq_lens (8 cached integer loads) -- its position p = i - (rows of the requests before r), and
the physical slot (block_table[r, p // block_size], p % block_size). Each of the 144 threads of
the row then moves 4 FP8 codes (one 32-bit load), widens them to float32, multiplies by the
scale in float32 (as the reference's `codes.float() * scale` does) and stores 16 bytes. The
gathered entries are read once and the output written once; the eager reference loops over the
requests with a gather, a conversion and a product each.

Host side: the output's row count is sum(seq_lens) (one small device-to-host read); the scale,
the call's argument, reaches the kernel as a one-element float32 tensor built once per value.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import Float8E4M3FN, Float32, Int32, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

VEC = 4  # FP8 codes per thread: a 32-bit load and a 128-bit float32 store
ROWS_PER_CTA = 4


@cute.kernel
def _gather_dequant_kernel(
    mSrc: cute.Tensor,  # (blocks, block_size, entry) FP8 codes
    mTable: cute.Tensor,  # (requests, blocks) int32
    mLens: cute.Tensor,  # (requests,) int32
    mScale: cute.Tensor,  # (1,) float32
    mDst: cute.Tensor,  # (rows, entry) float32
    num_requests: cutlass.Constexpr[int],
):
    tx, ty, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * ROWS_PER_CTA + ty
    if row < mDst.shape[0]:
        block_size = mSrc.shape[1]
        # Requests are laid out one after another: row's request is the number of requests
        # that end at or before it, and its first row is where the last of those ends.
        request = Int32(0)
        first = Int32(0)
        end = Int32(0)
        for j in cutlass.range_constexpr(num_requests):
            end = end + mLens[j]
            past = row >= end
            request = cutlass.select_(past, Int32(j + 1), request)
            first = cutlass.select_(past, end, first)
        pos = row - first
        blk = mTable[request, pos // block_size]
        entry = mSrc[blk, pos % block_size, None]

        load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float8E4M3FN, num_bits_per_copy=32)
        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float32, num_bits_per_copy=128)
        src = cute.local_tile(entry, (VEC,), (tx,))
        dst = cute.local_tile(mDst[row, None], (VEC,), (tx,))
        codes = cute.make_fragment_like(src)
        cute.copy(load, src, codes)
        out = cute.make_fragment_like(dst)
        out.store(codes.load().to(Float32) * mScale[0])
        cute.copy(store, out, dst)


@cute.jit
def _gather_dequant(
    mSrc: cute.Tensor,
    mTable: cute.Tensor,
    mLens: cute.Tensor,
    mScale: cute.Tensor,
    mDst: cute.Tensor,
    stream: cuda.CUstream,
):
    # The cache holds FP8 e4m3 codes as uint8: the same bytes, read as Float8E4M3FN.
    src = cute.make_tensor(cute.recast_ptr(mSrc.iterator, dtype=Float8E4M3FN), mSrc.layout)
    threads_per_row = mDst.shape[1] // VEC
    _gather_dequant_kernel(src, mTable, mLens, mScale, mDst, mLens.shape[0]).launch(
        grid=(cute.ceil_div(mDst.shape[0], ROWS_PER_CTA), 1, 1),
        block=(threads_per_row, ROWS_PER_CTA, 1),
        stream=stream,
    )


_compiled = {}
_scales = {}


def _compile(cache_shape, table_shape, rows):
    entry = cache_shape[2]
    if entry % VEC != 0:
        raise ValueError(f"entry of {entry} bytes: expected a multiple of {VEC}")

    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    return cute.compile(
        _gather_dequant,
        fake(Uint8, cache_shape, 16),
        fake(Int32, table_shape),
        fake(Int32, (table_shape[0],)),
        fake(Float32, (1,)),
        fake(Float32, (rows, entry), 16),
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def _scale_tensor(scale, device):
    key = (float(scale), str(device))
    t = _scales.get(key)
    if t is None:
        t = _scales[key] = torch.tensor([float(scale)], dtype=torch.float32, device=device)
    return t


def solve(src_cache, block_table, seq_lens, scale):
    rows = int(seq_lens.sum())
    out = torch.empty(rows, src_cache.shape[2], dtype=torch.float32, device=src_cache.device)
    if rows == 0:
        return out
    key = (tuple(src_cache.shape), tuple(block_table.shape), rows)
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    fn(src_cache, block_table, seq_lens, _scale_tensor(scale, src_cache.device), out)
    return out
