"""vLLM swap_blocks (batched KV-cache block copy under one remap, bytes) in CuTe DSL, in place.

Each cache [blocks, block_size, heads, head_dim] is viewed as [blocks, block_bytes]: a block is
one contiguous run of block_bytes (64 KiB in the full workload). CTA `pair` copies block
src -> dst of one (source, destination) cache pair: 256 threads each move their 16-byte vectors
(16 of them for 64 KiB) global -> registers -> global, every load issued before the first store.
The kernel is compiled once and launched twice, for the key caches and for the value caches.
Destinations are distinct and never a source, so the CTAs need no ordering. Only the copied
blocks are touched: 2 x 64 KiB per pair and cache, the roofline. Eager PyTorch gathers the
sources into a temporary and scatters it back (twice the traffic, plus index kernels).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass import Int32, Int64, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

VEC = 16  # bytes per 128-bit access
MAX_THREADS = 256


@cute.kernel
def _copy_blocks_kernel(
    mSrc: cute.Tensor, mDst: cute.Tensor, mMap: cute.Tensor, num_threads: cutlass.Constexpr[int]
):
    tidx, _, _ = cute.arch.thread_idx()
    pair, _, _ = cute.arch.block_idx()
    block_bytes = mSrc.shape[1]
    src = Int32(mMap[pair, 0])
    dst = Int32(mMap[pair, 1])

    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Uint8, num_bits_per_copy=128)
    tiled = cute.make_tiled_copy_tv(
        atom, cute.make_layout((1, num_threads)), cute.make_layout((1, VEC))
    )
    thr = tiled.get_slice(tidx)
    tSrc = thr.partition_S(cute.local_tile(mSrc, (1, block_bytes), (src, 0)))  # ((16,1),1,V)
    tDst = thr.partition_D(cute.local_tile(mDst, (1, block_bytes), (dst, 0)))
    frag = cute.make_fragment_like(tSrc)
    cute.copy(atom, tSrc, frag)
    cute.copy(atom, frag, tDst)


@cute.jit
def _copy_blocks(mSrc4: cute.Tensor, mDst4: cute.Tensor, mMap: cute.Tensor, stream: cuda.CUstream):
    blocks = mSrc4.shape[0]
    block_bytes = mSrc4.shape[1] * mSrc4.shape[2] * mSrc4.shape[3]
    layout = cute.make_layout((blocks, block_bytes), stride=(block_bytes, 1))
    src = cute.make_tensor(mSrc4.iterator, layout)
    dst = cute.make_tensor(mDst4.iterator, layout)
    num_threads = min(MAX_THREADS, block_bytes // VEC)
    _copy_blocks_kernel(src, dst, mMap, num_threads).launch(
        grid=(mMap.shape[0], 1, 1), block=(num_threads, 1, 1), stream=stream
    )


_compiled = {}


def _compile(cache_shape, num_pairs):
    block_bytes = cache_shape[1] * cache_shape[2] * cache_shape[3]
    threads = min(MAX_THREADS, block_bytes // VEC)
    if block_bytes % VEC != 0 or (block_bytes // VEC) % threads != 0:
        raise ValueError(f"a block of {block_bytes} bytes is not a whole number of 16-byte vectors")
    cache = make_fake_compact_tensor(
        Uint8, cache_shape, stride_order=tuple(reversed(range(4))), assumed_align=16
    )
    mapping = make_fake_compact_tensor(Int64, (num_pairs, 2), stride_order=(1, 0))
    return cute.compile(
        _copy_blocks, cache, cache, mapping, make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(src_k, src_v, dst_k, dst_v, block_mapping):
    key = (tuple(src_k.shape), block_mapping.shape[0])
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    if block_mapping.shape[0] > 0:
        fn(src_k, dst_k, block_mapping)
        fn(src_v, dst_v, block_mapping)
    return dst_k, dst_v
