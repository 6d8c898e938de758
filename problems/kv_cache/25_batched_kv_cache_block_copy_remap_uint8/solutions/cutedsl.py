"""vLLM copy_blocks (KV-cache block copy-on-write, FP8 bytes) in CuTe DSL, in place.

The cache [layers, 2, blocks, block_size, kv_heads, head_dim] is viewed as
[layers * 2, blocks, block_bytes]: a block of one layer's key or value cache is one contiguous
run of block_bytes (16 KiB in the full workload). CTA (pair, layer*2 + kv) copies block
src -> dst of that cache: 256 threads each move their 16-byte vectors (4 of them for 16 KiB)
global -> registers -> global, every load issued before the first store. Destinations are
distinct and never a source, so the CTAs need no ordering. Only the copied blocks are touched:
2 x 16 KiB per (pair, layer, kv), the roofline. Eager PyTorch gathers every source into a
temporary and scatters it back (twice the traffic, plus index kernels).
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
from cutlass import Int32, Int64, Uint8
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

VEC = 16  # bytes per 128-bit access
MAX_THREADS = 256


@cute.kernel
def _copy_blocks_kernel(mCache: cute.Tensor, mMap: cute.Tensor, num_threads: cutlass.Constexpr[int]):
    tidx, _, _ = cute.arch.thread_idx()
    pair, cache_idx, _ = cute.arch.block_idx()
    cache = mCache[cache_idx, None, None]  # (blocks, block_bytes)
    block_bytes = cache.shape[1]
    src = Int32(mMap[pair, 0])
    dst = Int32(mMap[pair, 1])

    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Uint8, num_bits_per_copy=128)
    tiled = cute.make_tiled_copy_tv(
        atom, cute.make_layout((1, num_threads)), cute.make_layout((1, VEC))
    )
    thr = tiled.get_slice(tidx)
    tSrc = thr.partition_S(cute.local_tile(cache, (1, block_bytes), (src, 0)))  # ((16,1),1,V)
    tDst = thr.partition_D(cute.local_tile(cache, (1, block_bytes), (dst, 0)))
    frag = cute.make_fragment_like(tSrc)
    cute.copy(atom, tSrc, frag)
    cute.copy(atom, frag, tDst)


@cute.jit
def _copy_blocks(mKV: cute.Tensor, mMap: cute.Tensor, stream: cuda.CUstream):
    layers, kv, blocks = mKV.shape[0], mKV.shape[1], mKV.shape[2]
    block_bytes = mKV.shape[3] * mKV.shape[4] * mKV.shape[5]
    caches = cute.make_tensor(
        mKV.iterator,
        cute.make_layout(
            (layers * kv, blocks, block_bytes), stride=(blocks * block_bytes, block_bytes, 1)
        ),
    )
    num_threads = min(MAX_THREADS, block_bytes // VEC)
    _copy_blocks_kernel(caches, mMap, num_threads).launch(
        grid=(mMap.shape[0], layers * kv, 1), block=(num_threads, 1, 1), stream=stream
    )


_compiled = {}


def _compile(cache_shape, num_pairs):
    block_bytes = cache_shape[3] * cache_shape[4] * cache_shape[5]
    threads = min(MAX_THREADS, block_bytes // VEC)
    if block_bytes % VEC != 0 or (block_bytes // VEC) % threads != 0:
        raise ValueError(f"a block of {block_bytes} bytes is not a whole number of 16-byte vectors")
    if cache_shape[0] * cache_shape[1] > 65535:
        raise ValueError("more than 65535 layer caches")
    cache = make_fake_compact_tensor(
        Uint8, cache_shape, stride_order=tuple(reversed(range(6))), assumed_align=16
    )
    mapping = make_fake_compact_tensor(Int64, (num_pairs, 2), stride_order=(1, 0))
    return cute.compile(
        _copy_blocks, cache, mapping, make_fake_stream(use_tvm_ffi_env_stream=True),
        options="--enable-tvm-ffi",
    )


def solve(kv_cache, block_mapping):
    key = (tuple(kv_cache.shape), block_mapping.shape[0])
    fn = _compiled.get(key)
    if fn is None:
        fn = _compiled[key] = _compile(*key)
    fn(kv_cache, block_mapping)
    return kv_cache
