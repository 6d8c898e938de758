"""Multi-head latent attention decode over a paged cache with page size 1, as FlashInfer's MLA
decode runs it for DeepSeek-V3 at tensor parallelism 8 (16 heads) with the weights absorbed: the
cache holds, per token, the 512-dimensional compressed KV latent (ckv, which serves as both key
and value) and the 64-dimensional RoPE part of the key (kpe). Each sequence's query token, given
as its latent part q_nope (512) and RoPE part q_pe (64), attends to all of its cached tokens.
Returns the attention output in the latent space and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the captured FlashInfer-Trace workload's: 64 sequences with the captured
lengths (75,145 cached tokens) in a 989,669-page pool; the page assignment is drawn afresh."""

import math

import torch

NUM_QO_HEADS = 16
HEAD_DIM_CKV = 512
HEAD_DIM_KPE = 64
# The captured softmax scale: DeepSeek-V3's 1/sqrt(192) times its YaRN mscale squared,
# (0.1 ln 40 + 1)^2, rounded to float32 (0.1352337747812271); passed as a Python float.
SM_SCALE = 0.1352337747812271

# Cached tokens of each sequence in the captured decode batch (FlashInfer-Trace record
# 5bef8d88-0f74-4ccb-a256-b02842951df3), in batch order.
CAPTURED_LENGTHS = (
    537, 514, 638, 510, 1572, 1540, 1593, 1590, 2661, 2103, 2418, 9197, 554, 519, 1879, 692, 814,
    679, 670, 540, 516, 518, 612, 512, 3299, 633, 536, 1050, 519, 568, 658, 514, 534, 728, 642, 916,
    1444, 1582, 1633, 1537, 1511, 629, 1096, 1501, 1486, 1512, 519, 550, 940, 568, 520, 3013, 555,
    523, 1426, 579, 644, 524, 517, 533, 1428, 1316, 1394, 1690,
)

WORKLOADS = {
    "full": {"lengths": CAPTURED_LENGTHS, "num_pages": 989669},
    # Same structure for CPU tests: a short, a long, a one-token and a middle sequence.
    "small": {"lengths": (5, 40, 1, 90), "num_pages": 500},
}


@torch.no_grad()
def reference(q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices, sm_scale):
    # q_nope: [batch, 16, 512]; q_pe: [batch, 16, 64]; ckv_cache: [num_pages, 1, 512]; kpe_cache:
    # [num_pages, 1, 64]; kv_indptr: [batch + 1] int32; kv_indices: [num_kv_tokens] int32 page
    # ids; sm_scale: float.
    compute = torch.promote_types(q_nope.dtype, torch.float32)
    batch = q_nope.shape[0]
    out = torch.empty(q_nope.shape, dtype=q_nope.dtype, device=q_nope.device)
    lse = torch.empty(q_nope.shape[:2], dtype=compute, device=q_nope.device)
    starts = kv_indptr.tolist()
    for b in range(batch):
        pages = kv_indices[starts[b] : starts[b + 1]].long()
        ckv = ckv_cache[pages].flatten(0, 1).to(compute)  # [t, 512]: keys' latent part and values
        kpe = kpe_cache[pages].flatten(0, 1).to(compute)  # [t, 64]: keys' RoPE part
        logits = (q_nope[b].to(compute) @ ckv.T + q_pe[b].to(compute) @ kpe.T) * sm_scale
        lse[b] = torch.logsumexp(logits, dim=-1) / math.log(2.0)
        out[b] = (torch.softmax(logits, dim=-1) @ ckv).to(q_nope.dtype)
    return out, lse


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    lengths, num_pages = p["lengths"], p["num_pages"]
    batch, total = len(lengths), sum(lengths)
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    kv_indptr = torch.tensor(offsets, dtype=torch.int32, device=device)
    bf16 = torch.bfloat16
    q_nope = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM_CKV, device=device, dtype=bf16)
    q_pe = torch.randn(batch, NUM_QO_HEADS, HEAD_DIM_KPE, device=device, dtype=bf16)
    ckv_cache = torch.randn(num_pages, 1, HEAD_DIM_CKV, device=device, dtype=bf16)
    kpe_cache = torch.randn(num_pages, 1, HEAD_DIM_KPE, device=device, dtype=bf16)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[:total].to(torch.int32)
    return [q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr, kv_indices, SM_SCALE]
