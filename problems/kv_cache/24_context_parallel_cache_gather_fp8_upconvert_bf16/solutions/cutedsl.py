"""vLLM cp_gather_and_upconvert_fp8_kv_cache (DeepSeek-V3.2 fp8_ds_mla cache) in CuTe DSL.

One kernel: a CTA of 72 x 4 threads fills 4 workspace rows. Row r belongs to the request b
with workspace_starts[b] <= r < workspace_starts[b] + seq_lens[b] (a scan over the batch of 5,
unrolled, from cached loads); its entry is slot p % block_size of block block_table[b, p //
block_size] with p = r - workspace_starts[b]. The 656-byte entry is read through three typed
views of the same bytes: 512 FP8 codes, 4 float32 tile scales (bytes 512..527) and 64 bf16 rope
values (bytes 528..655). Threads 0..63 of a row each convert 8 codes (a 64-bit load) times
their tile's scale to bf16 (a 128-bit store); threads 64..71 copy the rope 16 bytes each.
Every gathered byte is read once and the workspace written once.

The workspace has sum(seq_lens) rows. The problem states that every size (so num_tokens) is
the same on every draw, so the row count is read once per input shape (one host sync on the
first call) and cached with the compiled kernel; later calls never synchronise.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
from cutlass import BFloat16, Float8E4M3FN, Float32, Int32, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

NOPE = 512  # FP8 latent values per entry
TILE = 128  # latent values per float32 scale
ROPE = 64  # bf16 rope values per entry
ENTRY_BYTES = NOPE + 4 * (NOPE // TILE) + 2 * ROPE  # 656
VEC = 8  # values per thread: 8 FP8 codes in, 8 bf16 (16 bytes) out
ROWS_PER_CTA = 4


@cute.kernel
def _gather_upconvert_kernel(
    mCodes: cute.Tensor,  # (blocks, block_size, 656) FP8 view of the cache
    mScales: cute.Tensor,  # (blocks, block_size, 4) float32 view
    mRope: cute.Tensor,  # (blocks, block_size, 64) bf16 view
    mTable: cute.Tensor,
    mSeqLens: cute.Tensor,
    mStarts: cute.Tensor,
    mDst: cute.Tensor,  # (num_tokens, 576) bf16
    batch: cutlass.Constexpr[int],
):
    tx, ty, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * ROWS_PER_CTA + ty
    if row < mDst.shape[0]:
        # The request that owns workspace row `row` (requests are laid out in order).
        b = Int32(0)
        for i in cutlass.range_constexpr(batch):
            start = mStarts[i]
            if row >= start and row < start + mSeqLens[i]:
                b = Int32(i)
        pos = row - mStarts[b]
        block_size = mCodes.shape[1]
        blk = mTable[b, pos // block_size]
        slot = pos % block_size

        store = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), BFloat16, num_bits_per_copy=128)
        dst = cute.local_tile(mDst[row, None], (VEC,), (tx,))
        out = cute.make_fragment_like(dst)
        if tx < NOPE // VEC:
            load = cute.make_copy_atom(
                cute.nvgpu.CopyUniversalOp(), Float8E4M3FN, num_bits_per_copy=64
            )
            src = cute.local_tile(mCodes[blk, slot, None], (VEC,), (tx,))
            codes = cute.make_fragment_like(src)
            cute.copy(load, src, codes)
            scale = mScales[blk, slot, tx // (TILE // VEC)]
            out.store((codes.load().to(Float32) * scale).to(BFloat16))
        else:
            src = cute.local_tile(mRope[blk, slot, None], (VEC,), (tx - NOPE // VEC,))
            cute.copy(store, src, out)
        cute.copy(store, out, dst)


@cute.jit
def _gather_upconvert(
    mSrc: cute.Tensor,
    mTable: cute.Tensor,
    mSeqLens: cute.Tensor,
    mStarts: cute.Tensor,
    mDst: cute.Tensor,
    stream: cuda.CUstream,
):
    blocks, block_size = mSrc.shape[0], mSrc.shape[1]
    base = mSrc.iterator
    # Three typed views of the same 656-byte entries (strides in units of the view's type).
    codes = cute.make_tensor(cute.recast_ptr(base, dtype=Float8E4M3FN), mSrc.layout)
    scales = cute.make_tensor(
        cute.recast_ptr(base + NOPE, dtype=Float32),
        cute.make_layout(
            (blocks, block_size, NOPE // TILE),
            stride=(block_size * ENTRY_BYTES // 4, ENTRY_BYTES // 4, 1),
        ),
    )
    rope = cute.make_tensor(
        cute.recast_ptr(base + NOPE + 4 * (NOPE // TILE), dtype=BFloat16),
        cute.make_layout(
            (blocks, block_size, ROPE), stride=(block_size * ENTRY_BYTES // 2, ENTRY_BYTES // 2, 1)
        ),
    )
    _gather_upconvert_kernel(
        codes, scales, rope, mTable, mSeqLens, mStarts, mDst, mSeqLens.shape[0]
    ).launch(
        grid=(cute.ceil_div(mDst.shape[0], ROWS_PER_CTA), 1, 1),
        block=((NOPE + ROPE) // VEC, ROWS_PER_CTA, 1),
        stream=stream,
    )


_compiled = {}


def _compile(cache_shape, table_shape, num_tokens):
    if cache_shape[2] != ENTRY_BYTES:
        raise ValueError(f"entries of {cache_shape[2]} bytes: expected {ENTRY_BYTES}")
    batch = table_shape[0]

    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    return cute.compile(
        _gather_upconvert,
        fake(Uint8, cache_shape, 16),
        fake(Int32, table_shape),
        fake(Int32, (batch,)),
        fake(Int32, (batch,)),
        fake(BFloat16, (num_tokens, NOPE + ROPE), 16),
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(src_cache, block_table, seq_lens, workspace_starts):
    key = (tuple(src_cache.shape), tuple(block_table.shape))
    cached = _compiled.get(key)
    if cached is None:
        # num_tokens = sum(seq_lens) is invariant across draws: read it once.
        num_tokens = sum(seq_lens.tolist())
        cached = _compiled[key] = (num_tokens, _compile(key[0], key[1], num_tokens))
    num_tokens, fn = cached
    dst = torch.empty(num_tokens, NOPE + ROPE, dtype=torch.bfloat16, device=src_cache.device)
    fn(src_cache, block_table, seq_lens, workspace_starts, dst)
    return dst
