"""vLLM gather_and_maybe_dequant_cache (MLA chunked-prefill context, FP8 cache) in CuTe DSL.

One kernel: a CTA of 72 x 4 threads fills 4 workspace rows. For row i the threads look up its
request b = token_to_seq[i], its context position p = i - cu_seq_lens[b] + seq_starts[b] and
the physical slot (block_table[b, p // block_size], p % block_size) -- the same few cached
integer loads in every lane -- then each of the 72 threads of the row moves 8 FP8 codes
(one 64-bit load), widens them to float32, multiplies by the per-tensor scale, rounds to bf16
and stores 16 bytes. The gathered entries are read once and the workspace written once; eager
PyTorch needs a dozen index / gather / convert kernels and float32 temporaries.
"""

import cuda.bindings.driver as cuda
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float8E4M3FN, Float32, Int32, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

VEC = 8  # FP8 codes per thread: a 64-bit load and a 128-bit bf16 store
ROWS_PER_CTA = 4


@cute.kernel
def _gather_dequant_kernel(
    mSrc: cute.Tensor,  # (blocks, block_size, entry) FP8 codes
    mTable: cute.Tensor,
    mCuSeqLens: cute.Tensor,
    mTokenToSeq: cute.Tensor,
    mSeqStarts: cute.Tensor,
    mScale: cute.Tensor,
    mDst: cute.Tensor,  # (tokens, entry) bf16
):
    tx, ty, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * ROWS_PER_CTA + ty
    if row < mDst.shape[0]:
        block_size = mSrc.shape[1]
        b = mTokenToSeq[row]
        pos = row - mCuSeqLens[b] + mSeqStarts[b]
        blk = mTable[b, pos // block_size]
        entry = mSrc[blk, pos % block_size, None]

        load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float8E4M3FN, num_bits_per_copy=64)
        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
        src = cute.local_tile(entry, (VEC,), (tx,))
        dst = cute.local_tile(mDst[row, None], (VEC,), (tx,))
        codes = cute.make_fragment_like(src)
        cute.copy(load, src, codes)
        values = codes.load().to(Float32) * mScale[0]
        out = cute.make_fragment_like(dst)
        out.store(values.to(BFloat16))
        cute.copy(store, out, dst)


@cute.jit
def _gather_dequant(
    mSrc: cute.Tensor,
    mTable: cute.Tensor,
    mCuSeqLens: cute.Tensor,
    mTokenToSeq: cute.Tensor,
    mSeqStarts: cute.Tensor,
    mScale: cute.Tensor,
    mDst: cute.Tensor,
    stream: cuda.CUstream,
):
    # The cache holds FP8 e4m3 codes as uint8: the same bytes, read as Float8E4M3FN.
    src = cute.make_tensor(cute.recast_ptr(mSrc.iterator, dtype=Float8E4M3FN), mSrc.layout)
    threads_per_row = mDst.shape[1] // VEC
    _gather_dequant_kernel(src, mTable, mCuSeqLens, mTokenToSeq, mSeqStarts, mScale, mDst).launch(
        grid=(cute.ceil_div(mDst.shape[0], ROWS_PER_CTA), 1, 1),
        block=(threads_per_row, ROWS_PER_CTA, 1),
        stream=stream,
    )


_compiled = {}


def _compile(cache_shape, table_shape, num_tokens):
    entry = cache_shape[2]
    if entry % 16 != 0:
        raise ValueError(f"entry of {entry} bytes: expected a multiple of 16")
    batch = table_shape[0]

    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    return cute.compile(
        _gather_dequant,
        fake(Uint8, cache_shape, 16),
        fake(Int32, table_shape),
        fake(Int32, (batch + 1,)),
        fake(Int32, (num_tokens,)),
        fake(Int32, (batch,)),
        fake(Float32, (1,)),
        fake(BFloat16, (num_tokens, entry), 16),
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(src_cache, block_table, cu_seq_lens, token_to_seq, seq_starts, scale):
    key = (tuple(src_cache.shape), tuple(block_table.shape), token_to_seq.shape[0])
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    dst = torch.empty(
        token_to_seq.shape[0], src_cache.shape[2], dtype=torch.bfloat16, device=src_cache.device
    )
    fn(src_cache, block_table, cu_seq_lens, token_to_seq, seq_starts, scale, dst)
    return dst
