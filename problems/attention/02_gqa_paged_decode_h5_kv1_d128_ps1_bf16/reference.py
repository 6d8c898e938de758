"""Grouped-query attention decode over a paged KV cache with page size 1 (FlashInfer's
BatchDecodeWithPagedKVCache): 5 query heads share 1 KV head of dimension 128. Each sequence's
single new query token attends to all of its cached tokens. Returns the attention output and the
base-2 log-sum-exp of the scaled logits, which FlashInfer returns for merging partial states."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 5
NUM_KV_HEADS = 1
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)

WORKLOADS = {
    "full": {"batch": 63, "num_kv_tokens": 19134, "num_pages": 32768,
             "num_qo_heads": NUM_QO_HEADS, "num_kv_heads": NUM_KV_HEADS, "head_dim": HEAD_DIM},
    "small": {"batch": 4, "num_kv_tokens": 150, "num_pages": 256,
              "num_qo_heads": NUM_QO_HEADS, "num_kv_heads": NUM_KV_HEADS, "head_dim": HEAD_DIM},
}


def reference(q, k_cache, v_cache, kv_indptr, kv_indices):
    # q: [batch, 5, 128]; k_cache, v_cache: [num_pages, 1 (page size), 1 (kv heads), 128];
    # kv_indptr: [batch + 1] int32; kv_indices: [num_kv_tokens] int32 page ids.
    compute = torch.promote_types(q.dtype, torch.float32)
    batch = q.shape[0]
    group = q.shape[1] // k_cache.shape[2]
    out = torch.empty(q.shape, dtype=compute, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    for b in range(batch):
        pages = kv_indices[kv_indptr[b] : kv_indptr[b + 1]].long()
        k = k_cache[pages].flatten(0, 1).to(compute)  # [tokens, kv_heads, dim]
        v = v_cache[pages].flatten(0, 1).to(compute)
        k = k.repeat_interleave(group, dim=1)  # [tokens, qo_heads, dim]
        v = v.repeat_interleave(group, dim=1)
        logits = torch.einsum("hd,thd->ht", q[b].to(compute), k) * SM_SCALE
        lse_e = torch.logsumexp(logits, dim=-1)
        out[b] = torch.einsum("ht,thd->hd", torch.softmax(logits, dim=-1), v)
        lse[b] = lse_e / math.log(2.0)
    return out.to(q.dtype), lse


def _sequence_lengths(batch, total, device):
    # Decode batches mix short and long contexts: log-normal shares of the total, each >= 1.
    weights = torch.exp(1.0 * torch.randn(batch, device=device, dtype=torch.float64))
    lengths = torch.floor(weights / weights.sum() * (total - batch)).long() + 1
    remainder = total - int(lengths.sum())
    lengths[torch.randperm(batch, device=device)[:remainder]] += 1
    return lengths


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    batch, total, pages = p["batch"], p["num_kv_tokens"], p["num_pages"]
    lengths = _sequence_lengths(batch, total, device)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32, device=device)
    kv_indptr[1:] = torch.cumsum(lengths, 0).to(torch.int32)
    # Pages are scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(pages, device=device)[:total].to(torch.int32)
    shape = (pages, 1, p["num_kv_heads"], p["head_dim"])
    q = torch.randn(batch, p["num_qo_heads"], p["head_dim"], device=device).to(torch.bfloat16)
    k_cache = torch.randn(shape, device=device).to(torch.bfloat16)
    v_cache = torch.randn(shape, device=device).to(torch.bfloat16)
    return [q, k_cache, v_cache, kv_indptr, kv_indices]
