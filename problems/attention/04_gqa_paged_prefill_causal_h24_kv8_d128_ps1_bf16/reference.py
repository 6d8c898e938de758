"""Causal grouped-query attention prefill over a paged KV cache with page size 1, as FlashInfer's
BatchPrefillWithPagedKVCache runs it for Llama-3.2-3B (24 query heads in groups of 3 on 8 KV
heads of dimension 128). Each sequence's new query tokens are the last of its tokens: query i of
a sequence with n_q queries and n_kv cached tokens sees the cached tokens 0 .. i + (n_kv - n_q).
Returns the attention output and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the captured FlashInfer-Trace workload's (27 sequences, 16,372 query tokens,
16,372 cached tokens in a 77,646-page pool); the page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 24
NUM_KV_HEADS = 8
PAGE_SIZE = 1
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)  # 0.08838834764831843, passed as a Python float
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query and cached tokens of each sequence in the captured batch (FlashInfer-Trace record
# 0b88caa4-106e-4017-a2a0-fc9840e4b66c), in batch order.
CAPTURED_Q_LENS = (
    145, 166, 173, 402, 336, 346, 340, 342, 445, 354, 546, 447, 513, 538, 545, 775, 561, 715, 825,
    596, 940, 1081, 1150, 955, 963, 1250, 923,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "kv_lens": CAPTURED_Q_LENS, "num_pages": 77646},
    # Same structure for CPU tests.
    "small": {"q_lens": (7, 33, 1, 70), "kv_lens": (7, 33, 1, 70), "num_pages": 200},
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
    # q: [total_q, 24, 128]; k_cache, v_cache: [num_pages, 1 (page size), 8 (kv heads), 128];
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
