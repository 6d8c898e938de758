"""vLLM cp_gather_and_upconvert_fp8_kv_cache (DeepSeek-V3.2 fp8_ds_mla cache) in CuTe DSL.

One kernel: a CTA of 72 x 4 threads fills 4 output rows. Requests are laid out one after
another, so row r belongs to the request b = the number of requests that end at or before r (an
unrolled pass over the 3 seq_lens, from cached loads), and its position is p = r - (rows of the
requests before b); its entry is slot p % block_size of block block_table[b, p // block_size].
The 656-byte entry is read through three typed views of the same bytes: 512 FP8 codes, 4 float32
group scales (bytes 512..527) and 64 bf16 rope values (bytes 528..655). Threads 0..63 of a row
each convert 8 codes (a 64-bit load) times their group's scale, in float32, to bf16 (a 128-bit
store); threads 64..71 copy the rope 16 bytes each. Every gathered byte is read once and the
output written once.

The block table is as wide as the longest request needs, which changes between draws: its width
is a runtime extent (`cute.sym_int()`), so one compiled kernel serves every draw. The output has
sum(seq_lens) rows; the problem states that total is the same on every draw, so it is read once
per input shape (one host sync on the first call) and cached with the compiled kernel.
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
    mTable: cute.Tensor,  # (requests, width) int32, width a runtime extent
    mSeqLens: cute.Tensor,
    mDst: cute.Tensor,  # (rows, 576) bf16
    batch: cutlass.Constexpr[int],
):
    tx, ty, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    row = bidx * ROWS_PER_CTA + ty
    if row < mDst.shape[0]:
        # The request that owns row `row`: the number of requests ending at or before it; its
        # first row is where the last of those ends.
        b = Int32(0)
        first = Int32(0)
        end = Int32(0)
        for i in cutlass.range_constexpr(batch):
            end = end + mSeqLens[i]
            past = row >= end
            b = cutlass.select_(past, Int32(i + 1), b)
            first = cutlass.select_(past, end, first)
        pos = row - first
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
        codes, scales, rope, mTable, mSeqLens, mDst, mSeqLens.shape[0]
    ).launch(
        grid=(cute.ceil_div(mDst.shape[0], ROWS_PER_CTA), 1, 1),
        block=((NOPE + ROPE) // VEC, ROWS_PER_CTA, 1),
        stream=stream,
    )


_compiled = {}


def _compile(cache_shape, batch, num_tokens):
    if cache_shape[2] != ENTRY_BYTES:
        raise ValueError(f"entries of {cache_shape[2]} bytes: expected {ENTRY_BYTES}")

    def fake(dtype, shape, align=None):
        order = tuple(reversed(range(len(shape))))
        return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)

    return cute.compile(
        _gather_upconvert,
        fake(Uint8, cache_shape, 16),
        fake(Int32, (batch, cute.sym_int())),
        fake(Int32, (batch,)),
        fake(BFloat16, (num_tokens, NOPE + ROPE), 16),
        make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(cache, block_table, seq_lens):
    key = (tuple(cache.shape), block_table.shape[0])
    cached = _compiled.get(key)
    if cached is None:
        # The total of seq_lens is invariant across draws: read it once.
        num_tokens = sum(seq_lens.tolist())
        cached = _compiled[key] = (num_tokens, _compile(key[0], key[1], num_tokens))
    num_tokens, fn = cached
    out = torch.empty(num_tokens, NOPE + ROPE, dtype=torch.bfloat16, device=cache.device)
    fn(cache, block_table, seq_lens, out)
    return out
