"""Causal grouped-query attention prefill over a paged KV cache with page size 1, as FlashInfer's
BatchPrefillWithPagedKVCache runs it for Llama-4-Scout-17B-16E at tensor parallelism 8 (5 query
heads on 1 KV head of dimension 128). Each sequence's new query tokens are the last of its
tokens: query i of a sequence with n_q queries and n_kv cached tokens sees the cached tokens 0 ..
i + (n_kv - n_q). Returns the attention output and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the captured FlashInfer-Trace workload's (54 sequences, 10,847 query tokens,
10,945 cached tokens in a 44,264-page pool); the page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 5
NUM_KV_HEADS = 1
PAGE_SIZE = 1
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)  # 0.08838834764831843, passed as a Python float
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query and cached tokens of each sequence in the captured batch (FlashInfer-Trace record
# b84bca7b-dd0f-4315-a523-b106191c049e), in batch order.
CAPTURED_Q_LENS = (
    5, 68, 1, 20, 19, 11, 29, 3, 6, 20, 34, 13, 109, 9, 6, 27, 9, 23, 20, 303, 267, 248, 75, 48, 21,
    8, 4, 434, 15, 316, 20, 14, 17, 48, 4, 12, 6, 149, 7, 6, 8, 749, 2051, 7, 95, 19, 148, 6, 26,
    73, 9, 11, 52, 5139,
)
CAPTURED_KV_LENS = (
    7, 69, 3, 21, 22, 12, 32, 4, 8, 22, 35, 15, 114, 12, 7, 31, 10, 24, 21, 305, 269, 250, 76, 49,
    22, 10, 5, 435, 16, 319, 21, 15, 18, 49, 7, 14, 8, 153, 9, 7, 10, 753, 2052, 9, 99, 20, 150, 7,
    27, 74, 10, 15, 53, 5140,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "kv_lens": CAPTURED_KV_LENS, "num_pages": 44264},
    # Same structure for CPU tests.
    "small": {"q_lens": (5, 33, 1, 40), "kv_lens": (7, 40, 3, 40), "num_pages": 200},
}


def _attend(q, k, v, sm_scale, out, lse):
    # q: [n_q, heads, d] (one sequence's queries), k, v: [n_kv, kv heads, d], all in the compute
    # dtype; writes out [n_q, heads, d] (rounded to out's dtype) and lse [n_q, heads].
    n_q, heads, d = q.shape
    n_kv, kv_heads = k.shape[0], k.shape[1]
    group = heads // kv_heads
    delta = n_kv - n_q  # query i is the cached token i + delta
    rows = max(1, CHUNK_ELEMENTS // (heads * max(n_kv, 1)))
    kv_pos = torch.arange(n_kv, device=q.device)
    for start in range(0, n_q, rows):
        stop = min(start + rows, n_q)
        # Query head h = kv * group + g reads KV head kv.
        qc = q[start:stop].view(stop - start, kv_heads, group, d)
        logits = torch.einsum("ikgd,tkd->kgit", qc, k) * sm_scale
        q_pos = torch.arange(start, stop, device=q.device)
        hidden = kv_pos[None, :] > q_pos[:, None] + delta  # [rows, n_kv]: causal mask
        logits.masked_fill_(hidden, float("-inf"))
        lse[start:stop] = (torch.logsumexp(logits, dim=-1) / math.log(2.0)).flatten(0, 1).T
        o = torch.einsum("kgit,tkd->ikgd", torch.softmax(logits, dim=-1), v)
        out[start:stop] = o.reshape(stop - start, heads, d).to(out.dtype)


@torch.no_grad()
def reference(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, sm_scale):
    # q: [total_q, 5, 128]; k_cache, v_cache: [num_pages, 1 (page size), 1 (kv heads), 128];
    # qo_indptr, kv_indptr: [batch + 1] int32 offsets into q and kv_indices; kv_indices:
    # [total_kv] int32 page ids; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    q_starts, kv_starts = qo_indptr.tolist(), kv_indptr.tolist()
    for b in range(len(q_starts) - 1):
        qs, qe = q_starts[b], q_starts[b + 1]
        pages = kv_indices[kv_starts[b] : kv_starts[b + 1]].long()
        k = k_cache[pages].flatten(0, 1).to(compute)  # [n_kv, kv heads, d]
        v = v_cache[pages].flatten(0, 1).to(compute)
        _attend(q[qs:qe].to(compute), k, v, sm_scale, out[qs:qe], lse[qs:qe])
    return out, lse


def _offsets(lengths, device):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return torch.tensor(offsets, dtype=torch.int32, device=device)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    q_lens, kv_units, num_pages = p["q_lens"], p["kv_lens"], p["num_pages"]
    q = torch.randn(sum(q_lens), NUM_QO_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    shape = (num_pages, PAGE_SIZE, NUM_KV_HEADS, HEAD_DIM)
    k_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    qo_indptr, kv_indptr = _offsets(q_lens, device), _offsets(kv_units, device)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[: sum(kv_units)].to(torch.int32)
    return [q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, SM_SCALE]
