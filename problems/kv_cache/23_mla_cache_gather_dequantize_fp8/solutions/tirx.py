"""vLLM gather_and_maybe_dequant_cache (DeepSeek-V3 MLA, FP8 cache -> bf16 workspace) in TVM TIRx.

One thread per 16 consecutive values of a workspace row (36 threads per 576-wide row). A thread
finds its cache entry through token_to_seq / cu_seq_lens / seq_starts / block_table (small, cached
in L1/L2), loads its 16 FP8 codes with one 128-bit load, widens them to float32, multiplies by the
per-tensor scale, rounds to bf16 and writes 32 bytes with two 128-bit stores. The cache is passed
as a float8_e4m3fn view of the uint8 tensor (same bytes). Only the gathered entries are read
(2.4 MB) and the workspace written once (4.7 MB), in a single launch, where eager PyTorch runs a
chain of index, gather, convert and multiply kernels.
"""

import torch
import tvm
from tvm.script import tirx as T

THREADS = 256


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build(blocks: int, block_size: int, entry: int, batch: int, max_blocks: int):
    vec = 16 if entry % 16 == 0 else 8 if entry % 8 == 0 else 2  # FP8 codes per thread
    half = vec // 2 if vec > 2 else vec  # bf16 lanes per store
    chunks = entry // vec  # threads per workspace row

    @T.prim_func
    def gather_dequant(src_h: T.handle, bt_h: T.handle, cu_h: T.handle, t2s_h: T.handle,
                       starts_h: T.handle, scale_h: T.handle, dst_h: T.handle):
        tokens = T.int32()
        S = T.match_buffer(src_h, (blocks, block_size, entry), "float8_e4m3fn")
        BT = T.match_buffer(bt_h, (batch, max_blocks), "int32")
        CU = T.match_buffer(cu_h, (batch + 1,), "int32")
        T2S = T.match_buffer(t2s_h, (tokens,), "int32")
        ST = T.match_buffer(starts_h, (batch,), "int32")
        SC = T.match_buffer(scale_h, (1,), "float32")
        D = T.match_buffer(dst_h, (tokens, entry), "bfloat16")
        T.device_entry()
        cta = T.cta_id([(tokens * chunks + THREADS - 1) // THREADS])
        tid = T.thread_id([THREADS])
        codes = T.alloc_local((vec,), "float8_e4m3fn")
        vals = T.alloc_local((vec,), "bfloat16")
        idx = T.meta_var(cta * THREADS + tid)
        if idx < tokens * chunks:
            i = T.meta_var(idx // chunks)
            col = T.meta_var(idx % chunks * vec)
            b = T.meta_var(T2S[i])
            pos = T.meta_var(i - CU[b] + ST[b])  # position in the request's context
            blk = T.meta_var(BT[b, pos // block_size])
            for v in T.vectorized(vec):
                codes[v] = S[blk, pos % block_size, col + v]
            scale = SC[0]
            for v in T.unroll(vec):
                vals[v] = T.bfloat16(T.float32(codes[v]) * scale)
            for h in T.unroll(vec // half):
                for v in T.vectorized(half):
                    D[i, col + h * half + v] = vals[h * half + v]

    return gather_dequant


_KERNELS = {}


def _kernel(shape, device):
    key = (shape, str(device))
    fn = _KERNELS.get(key)
    if fn is None:
        mod = tvm.IRModule({"main": _build(*shape)})
        fn = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
        _KERNELS[key] = fn
    return fn


def solve(src_cache, block_table, cu_seq_lens, token_to_seq, seq_starts, scale):
    blocks, block_size, entry = src_cache.shape
    dst = torch.empty(token_to_seq.shape[0], entry, dtype=torch.bfloat16, device=src_cache.device)
    if dst.shape[0] > 0:
        shape = (blocks, block_size, entry, block_table.shape[0], block_table.shape[1])
        _kernel(shape, src_cache.device)(src_cache.view(torch.float8_e4m3fn), block_table,
                                         cu_seq_lens, token_to_seq, seq_starts, scale, dst)
    return dst
