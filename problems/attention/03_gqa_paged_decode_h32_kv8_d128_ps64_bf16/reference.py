"""Grouped-query attention decode over a paged KV cache with page size 64, as FlashInfer's
BatchDecodeWithPagedKVCache runs it for Llama-3.1-8B (32 query heads in groups of 4 on 8 KV
heads of dimension 128). Each sequence's single new query token attends to all of its cached
tokens: every token of its pages but the last, and the first kv_last_page_len[b] tokens of its
last page. Returns the attention output and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the captured FlashInfer-Trace workload's: 64 sequences holding 27,222 pages
of a 29,441-page pool, each sequence's last page holding one token (1,738,176 cached tokens in
all); the page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 32
NUM_KV_HEADS = 8
PAGE_SIZE = 64
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)  # 0.08838834764831843, passed as a Python float

# Pages of each sequence in the captured decode batch (FlashInfer-Trace record
# 8c88a86f-1843-42eb-9251-8a0ef4b6a1ee), in batch order; every last page holds one token.
CAPTURED_PAGES = (
    46, 29, 74, 103, 282, 28, 29, 17, 62, 22, 20, 59, 15, 24, 31, 352, 82, 2074, 2591, 1047, 1824,
    1826, 981, 1077, 1021, 31, 209, 25, 33, 27, 42, 20, 28, 36, 22, 424, 145, 193, 21, 20, 26, 55,
    36, 41, 2387, 2676, 326, 26, 404, 146, 16, 27, 55, 1999, 35, 1627, 1093, 311, 61, 19, 352, 420,
    13, 79,
)

WORKLOADS = {
    "full": {"pages": CAPTURED_PAGES, "num_pages": 29441},
    # Same structure for CPU tests: 4 sequences of 2, 5, 1 and 3 pages in a 40-page pool.
    "small": {"pages": (2, 5, 1, 3), "num_pages": 40},
}
LAST_PAGE_LEN = 1  # tokens in each sequence's last page, as captured


@torch.no_grad()
def reference(q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, sm_scale):
    # q: [batch, 32, 128]; k_cache, v_cache: [num_pages, 64 (page size), 8 (kv heads), 128];
    # kv_indptr: [batch + 1] int32 offsets into kv_indices; kv_indices: [total_pages] int32 page
    # ids; kv_last_page_len: [batch] int32 tokens in each sequence's last page; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    batch, num_qo_heads, head_dim = q.shape
    page_size, num_kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = num_qo_heads // num_kv_heads
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, num_qo_heads), dtype=compute, device=q.device)
    starts, last_lens = kv_indptr.tolist(), kv_last_page_len.tolist()
    for b in range(batch):
        pages = kv_indices[starts[b] : starts[b + 1]].long()
        length = (pages.numel() - 1) * page_size + last_lens[b]
        k = k_cache[pages].flatten(0, 1)[:length].to(compute)  # [t, kv heads, d]
        v = v_cache[pages].flatten(0, 1)[:length].to(compute)
        # Query head h = kv * group + g reads KV head kv.
        qb = q[b].to(compute).view(num_kv_heads, group, head_dim)
        logits = torch.einsum("kgd,tkd->kgt", qb, k) * sm_scale
        lse[b] = (torch.logsumexp(logits, dim=-1) / math.log(2.0)).flatten()
        o = torch.einsum("kgt,tkd->kgd", torch.softmax(logits, dim=-1), v)
        out[b] = o.reshape(num_qo_heads, head_dim).to(q.dtype)
    return out, lse


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    pages, num_pages = p["pages"], p["num_pages"]
    batch, total = len(pages), sum(pages)
    offsets = [0]
    for n in pages:
        offsets.append(offsets[-1] + n)
    kv_indptr = torch.tensor(offsets, dtype=torch.int32, device=device)
    kv_last_page_len = torch.full((batch,), LAST_PAGE_LEN, dtype=torch.int32, device=device)
    shape = (num_pages, PAGE_SIZE, NUM_KV_HEADS, HEAD_DIM)
    q = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[:total].to(torch.int32)
    return [q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, SM_SCALE]
