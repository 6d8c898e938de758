"""vLLM gather_and_maybe_dequant_cache (MLA cache gather, FP8 codes to float32) in TVM TIRx.

One kernel, one thread per 16 codes of an output row. Thread (row i, chunk c) finds i's request
r with an unrolled pass over seq_lens (requests are laid out one after another: r is the number
of requests that end at or before i), its position p = i - (rows of the requests before r) and
the slot (block_table[r, p // block_size], p % block_size); it loads 16 FP8 codes with one
128-bit load, widens them to float32, multiplies by the scale in float32 (as the reference's
`codes.float() * scale`) and stores four 128-bit float32 vectors. Entries are read once and the
output written once; the eager reference loops over the requests.

Host side: the row count is sum(seq_lens) (one small device-to-host read); the scale, the call's
argument, reaches the kernel as a one-element float32 tensor built once per value.
"""

import torch
import tvm
from tvm.script import tirx as T

THREADS = 256
STORE = 4  # float32 lanes per 128-bit store


def _target(device):
    major, minor = torch.cuda.get_device_capability(device)
    arch = f"sm_{major}{minor}{'a' if major >= 9 else ''}"
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _build(blocks: int, block_size: int, entry: int, requests: int, table_width: int):
    vec = 16 if entry % 16 == 0 else 4  # FP8 codes per thread
    chunks = entry // vec  # threads per output row

    @T.prim_func
    def gather_dequant(src_h: T.handle, bt_h: T.handle, len_h: T.handle, scale_h: T.handle,
                       dst_h: T.handle):
        rows = T.int32()
        S = T.match_buffer(src_h, (blocks, block_size, entry), "float8_e4m3fn")
        BT = T.match_buffer(bt_h, (requests, table_width), "int32")
        L = T.match_buffer(len_h, (requests,), "int32")
        SC = T.match_buffer(scale_h, (1,), "float32")
        D = T.match_buffer(dst_h, (rows, entry), "float32")
        T.device_entry()
        cta = T.cta_id([(rows * chunks + THREADS - 1) // THREADS])
        tid = T.thread_id([THREADS])
        codes = T.alloc_local((vec,), "float8_e4m3fn")
        vals = T.alloc_local((vec,), "float32")
        found = T.alloc_local((3,), "int32")  # request, its first row, running end
        idx = T.meta_var(cta * THREADS + tid)
        if idx < rows * chunks:
            i = T.meta_var(idx // chunks)
            col = T.meta_var(idx % chunks * vec)
            found[0] = 0
            found[1] = 0
            found[2] = 0
            for j in T.unroll(requests):
                found[2] = found[2] + L[j]
                if i >= found[2]:
                    found[0] = j + 1
                    found[1] = found[2]
            pos = T.meta_var(i - found[1])
            blk = T.meta_var(BT[found[0], pos // block_size])
            for v in T.vectorized(vec):
                codes[v] = S[blk, pos % block_size, col + v]
            scale = SC[0]
            for v in T.unroll(vec):
                vals[v] = T.float32(codes[v]) * scale
            for h in T.unroll(vec // STORE):
                for v in T.vectorized(STORE):
                    D[i, col + h * STORE + v] = vals[h * STORE + v]

    return gather_dequant


_KERNELS = {}
_SCALES = {}


def _kernel(shape, device):
    key = (shape, str(device))
    fn = _KERNELS.get(key)
    if fn is None:
        mod = tvm.IRModule({"main": _build(*shape)})
        fn = tvm.compile(mod, target=_target(device), tir_pipeline="tirx")["main"]
        _KERNELS[key] = fn
    return fn


def _scale_tensor(scale, device):
    key = (float(scale), str(device))
    t = _SCALES.get(key)
    if t is None:
        t = _SCALES[key] = torch.tensor([float(scale)], dtype=torch.float32, device=device)
    return t


def solve(src_cache, block_table, seq_lens, scale):
    blocks, block_size, entry = src_cache.shape
    rows = int(seq_lens.sum())
    out = torch.empty(rows, entry, dtype=torch.float32, device=src_cache.device)
    if rows > 0:
        shape = (blocks, block_size, entry, block_table.shape[0], block_table.shape[1])
        _kernel(shape, src_cache.device)(src_cache.view(torch.float8_e4m3fn), block_table, seq_lens,
                                         _scale_tensor(scale, src_cache.device), out)
    return out
