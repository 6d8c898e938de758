"""Causal grouped-query attention prefill over a paged KV cache with page size 64, as
FlashInfer's BatchPrefillWithPagedKVCache runs it for Qwen3-235B-A22B at tensor parallelism 4 (16
query heads on 1 KV head of dimension 128). A sequence's cached tokens are every token of its
pages but the last and the first kv_last_page_len[b] tokens of its last page; its new query
tokens are the last of them: query i of a sequence with n_q queries and n_kv cached tokens sees
the cached tokens 0 .. i + (n_kv - n_q). Returns the attention output and the base-2 log-sum-exp
of the scaled logits.

The batch geometry is the captured FlashInfer-Trace workload's (15 sequences, 969 query tokens, 969
pages holding 61,071 cached tokens in a 4,166-page pool, every last page holding one token); the
page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 16
NUM_KV_HEADS = 1
PAGE_SIZE = 64
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)  # 0.08838834764831843, passed as a Python float
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query tokens of each sequence in the captured batch (FlashInfer-Trace record
# 820d93c0-2670-4ee2-8b19-864e471836a3), in batch order. The capture gives each sequence as many
# pages as query tokens, every last page holding one token: n_kv = (pages - 1) * 64 + 1.
CAPTURED_Q_LENS = (
    17, 62, 93, 270, 16, 17, 5, 50, 10, 8, 47, 3, 12, 19, 340,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "pages": CAPTURED_Q_LENS, "num_pages": 4166},
    # Same structure for CPU tests.
    "small": {"q_lens": (4, 2, 7, 1), "pages": (4, 2, 7, 1), "num_pages": 30},
}
LAST_PAGE_LEN = 1  # tokens in each sequence's last page, as captured


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
def reference(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, sm_scale):
    # q: [total_q, 16, 128]; k_cache, v_cache: [num_pages, 64 (page size), 1 (kv heads), 128];
    # qo_indptr: [batch + 1] int32 offsets into q; kv_indptr: [batch + 1] int32 offsets into
    # kv_indices, in pages; kv_indices: [total_pages] int32 page ids; kv_last_page_len: [batch]
    # int32 tokens in each sequence's last page; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    page_size = k_cache.shape[1]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    q_starts, kv_starts = qo_indptr.tolist(), kv_indptr.tolist()
    last_lens = kv_last_page_len.tolist()
    for b in range(len(q_starts) - 1):
        qs, qe = q_starts[b], q_starts[b + 1]
        pages = kv_indices[kv_starts[b] : kv_starts[b + 1]].long()
        n_kv = (pages.numel() - 1) * page_size + last_lens[b]
        k = k_cache[pages].flatten(0, 1)[:n_kv].to(compute)  # [n_kv, kv heads, d]
        v = v_cache[pages].flatten(0, 1)[:n_kv].to(compute)
        _attend(q[qs:qe].to(compute), k, v, sm_scale, out[qs:qe], lse[qs:qe])
    return out, lse


def _offsets(lengths, device):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return torch.tensor(offsets, dtype=torch.int32, device=device)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    q_lens, kv_units, num_pages = p["q_lens"], p["pages"], p["num_pages"]
    q = torch.randn(sum(q_lens), NUM_QO_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    shape = (num_pages, PAGE_SIZE, NUM_KV_HEADS, HEAD_DIM)
    k_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    qo_indptr, kv_indptr = _offsets(q_lens, device), _offsets(kv_units, device)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[: sum(kv_units)].to(torch.int32)
    kv_last_page_len = torch.full((len(q_lens),), LAST_PAGE_LEN, dtype=torch.int32, device=device)
    return [q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, kv_last_page_len, SM_SCALE]
