"""Grouped-query attention decode over a paged KV cache with page size 1, as FlashInfer's
BatchDecodeWithPagedKVCache runs it for Llama-3.1-8B (32 query heads in groups of 4 on 8 KV
heads of dimension 128). Each sequence's single new query token attends to all of its cached
tokens. Returns the attention output and the base-2 log-sum-exp of the scaled logits, which
FlashInfer returns for merging partial states.

The batch geometry is the captured FlashInfer-Trace workload's: 64 sequences with the captured
lengths (58,966 cached tokens) in a 68,237-page pool; the page assignment is drawn afresh."""

import math

import torch

HEAD_DIM = 128
NUM_QO_HEADS = 32
NUM_KV_HEADS = 8
# The captured sm_scale: 1/sqrt(128) as a float32 (0.0883883461356163), passed as a Python float.
SM_SCALE = 0.0883883461356163

# Cached tokens of each sequence in the captured decode batch (FlashInfer-Trace record
# 5444fc56-b282-4228-b233-ee170d1bd127), in batch order.
CAPTURED_LENGTHS = (
    542, 525, 570, 599, 778, 524, 525, 513, 558, 518, 516, 555, 511, 520, 527, 848, 578, 2570,
    3087, 1543, 2320, 2322, 1477, 1573, 1517, 527, 705, 521, 529, 523, 538, 516, 524, 532, 518,
    920, 641, 689, 517, 516, 522, 551, 532, 537, 2883, 3172, 822, 522, 900, 642, 512, 523, 551,
    2495, 531, 2123, 1589, 807, 557, 515, 848, 916, 509, 575,
)

WORKLOADS = {
    "full": {"lengths": CAPTURED_LENGTHS, "num_pages": 68237},
    # Same structure for CPU tests: a short, a long, a one-token and a middle sequence.
    "small": {"lengths": (5, 61, 1, 130), "num_pages": 300},
}


@torch.no_grad()
def reference(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    # q: [batch, 32, 128]; k_cache, v_cache: [num_pages, 1 (page size), 8 (kv heads), 128];
    # kv_indptr: [batch + 1] int32; kv_indices: [num_kv_tokens] int32 page ids; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    group = q.shape[1] // k_cache.shape[2]
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    starts = kv_indptr.tolist()
    for b in range(q.shape[0]):
        pages = kv_indices[starts[b] : starts[b + 1]].long()
        # Query head h reads KV head h // group.
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
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    kv_indptr = torch.tensor(offsets, dtype=torch.int32, device=device)
    shape = (num_pages, 1, NUM_KV_HEADS, HEAD_DIM)
    q = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(shape, device=device, dtype=torch.bfloat16)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[:total].to(torch.int32)
    return [q, k_cache, v_cache, kv_indptr, kv_indices, SM_SCALE]
