"""Grouped-query attention decode over a paged KV cache with page size 1, as FlashInfer's
BatchDecodeWithPagedKVCache runs it for Llama-4-Scout-17B-16E at tensor parallelism 8 (5 query
heads share 1 KV head of dimension 128 on each GPU). Each sequence's single new query token
attends to all of its cached tokens. Returns the attention output and the base-2 log-sum-exp of
the scaled logits, which FlashInfer returns for merging partial states.

The batch geometry is the captured FlashInfer-Trace workload's: 63 sequences with the captured
lengths (19,134 cached tokens) in a 53,173-page pool; the page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 5
NUM_KV_HEADS = 1
SM_SCALE = 1.0 / math.sqrt(HEAD_DIM)  # 0.08838834764831843, passed as a Python float

# Cached tokens of each sequence in the captured decode batch (FlashInfer-Trace record
# 69ec7197-791c-419a-ae93-a3d2f0d49fd0), in batch order.
CAPTURED_LENGTHS = (
    20, 8, 70, 4, 22, 23, 13, 33, 5, 9, 23, 36, 16, 115, 13, 8, 32, 11, 25, 22, 306, 270, 251, 77,
    50, 23, 11, 6, 436, 17, 320, 22, 16, 19, 50, 8, 15, 9, 154, 10, 8, 11, 2053, 10, 100, 21, 151,
    8, 28, 75, 11, 16, 54, 5141, 5668, 13, 123, 12, 1813, 1123, 23, 78, 16,
)

WORKLOADS = {
    "full": {"lengths": CAPTURED_LENGTHS, "num_pages": 53173},
    # Same structure for CPU tests: a very short, a long, a one-token and a middle sequence.
    "small": {"lengths": (3, 40, 1, 106), "num_pages": 256},
}


@torch.no_grad()
def reference(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    # q: [batch, 5, 128]; k_cache, v_cache: [num_pages, 1 (page size), 1 (kv heads), 128];
    # kv_indptr: [batch + 1] int32; kv_indices: [num_kv_tokens] int32 page ids; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    batch = q.shape[0]
    group = q.shape[1] // k_cache.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    starts = kv_indptr.tolist()
    for b in range(batch):
        pages = kv_indices[starts[b] : starts[b + 1]].long()
        k = k_cache[pages].flatten(0, 1).to(compute).repeat_interleave(group, dim=1)  # [t, h, d]
        v = v_cache[pages].flatten(0, 1).to(compute).repeat_interleave(group, dim=1)
        logits = torch.einsum("hd,thd->ht", q[b].to(compute), k) * sm_scale
        lse[b] = torch.logsumexp(logits, dim=-1) / math.log(2.0)
        # Each sequence's output is rounded to the query dtype on its own, as FlashInfer writes it.
        out[b] = torch.einsum("ht,thd->hd", torch.softmax(logits, dim=-1), v).to(q.dtype)
    return out, lse


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    lengths, num_pages = p["lengths"], p["num_pages"]
    batch, total = len(lengths), sum(lengths)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32, device=device)
    kv_indptr[1:] = torch.cumsum(torch.tensor(lengths, device=device), 0).to(torch.int32)
    shape = (num_pages, 1, NUM_KV_HEADS, HEAD_DIM)
    q = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM, device=device).to(torch.bfloat16)
    k_cache = torch.randn(shape, device=device).to(torch.bfloat16)
    v_cache = torch.randn(shape, device=device).to(torch.bfloat16)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[:total].to(torch.int32)
    return [q, k_cache, v_cache, kv_indptr, kv_indices, SM_SCALE]
