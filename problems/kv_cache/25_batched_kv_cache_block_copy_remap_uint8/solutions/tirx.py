"""vLLM copy_blocks (KV-cache block copy with a remap, FP8 bytes) in TVM TIRx.

The cache is seen as [layers * 2, num_blocks, block_bytes] (a view, no copy). The grid is
(pairs, layers * 2): each CTA reads its (src, dst) pair from block_mapping and copies one block
(16 KB in the full workload) with 128-bit loads and stores, every thread issuing all of its loads
before its stores. Only the copied blocks move: 2 x 268 MB for the full workload, where eager
PyTorch's advanced-indexing assignment gathers the sources into a temporary and scatters it back.
Destinations are distinct and never a source, so the CTAs need no ordering. The cache is updated
in place and returned.
"""

import torch
import tvm
from tvm.script import tirx as T

THREADS = 256


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build(caches: int, blocks: int, block_bytes: int):
    vec = next(v for v in (16, 8, 4, 2, 1) if block_bytes % v == 0)  # bytes per access
    chunks = block_bytes // vec
    iters = (chunks + THREADS - 1) // THREADS

    @T.prim_func
    def copy_blocks(cache_h: T.handle, map_h: T.handle):
        pairs = T.int32()
        C = T.match_buffer(cache_h, (caches, blocks, block_bytes), "uint8")
        M = T.match_buffer(map_h, (pairs, 2), "int64")
        T.device_entry()
        p, c = T.cta_id([pairs, caches])
        tid = T.thread_id([THREADS])
        buf = T.alloc_local((iters * vec,), "uint8")
        src = T.meta_var(T.int32(M[p, 0]))
        dst = T.meta_var(T.int32(M[p, 1]))
        for it in T.unroll(iters):
            off = T.meta_var((it * THREADS + tid) * vec)
            if off < block_bytes:
                for v in T.vectorized(vec):
                    buf[it * vec + v] = C[c, src, off + v]
        for it in T.unroll(iters):
            off = T.meta_var((it * THREADS + tid) * vec)
            if off < block_bytes:
                for v in T.vectorized(vec):
                    C[c, dst, off + v] = buf[it * vec + v]

    return copy_blocks


_KERNELS = {}


def _kernel(shape, device):
    key = (shape, str(device))
    fn = _KERNELS.get(key)
    if fn is None:
        mod = tvm.IRModule({"main": _build(*shape)})
        fn = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
        _KERNELS[key] = fn
    return fn


def solve(kv_cache, block_mapping):
    layers, kv, blocks = kv_cache.shape[:3]
    caches = kv_cache.view(layers * kv, blocks, -1)  # a view of the same storage
    if caches.numel() >= 2**31:
        raise ValueError("the kernel indexes the cache with 32-bit offsets")
    if block_mapping.shape[0] > 0:
        _kernel(tuple(caches.shape), kv_cache.device)(caches, block_mapping)
    return kv_cache
