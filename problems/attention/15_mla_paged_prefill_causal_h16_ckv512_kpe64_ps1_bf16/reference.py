"""Causal multi-head latent attention prefill over a paged cache with page size 1, as FlashInfer's
MLA prefill runs it for DeepSeek-V3 at tensor parallelism 8 (16 heads) with the weights absorbed:
the cache holds, per token, the 512-dimensional compressed KV latent (ckv, both key and value)
and the 64-dimensional RoPE part of the key (kpe). Each sequence's new query tokens are the last
of its tokens: query i of a sequence with n_q queries and n_kv cached tokens sees the cached
tokens 0 .. i + (n_kv - n_q). Returns the attention output in the latent space and the base-2
log-sum-exp of the scaled logits.

Two formulations of the same computation live here. `reference` is the published one, a Python
loop over the query tokens (about 0.74 s a call on an H200); the judge times it as the eager
baseline, so that speedups stay comparable with the published harness's. `correctness_reference`
computes all of a sequence's queries at once under a causal mask; the judge uses it for the
expected outputs and the float64 anchors. tests/python/test_attention_references.py checks that
the two agree on the small and the full workload.

The batch geometry is the captured FlashInfer-Trace workload's: 28 sequences, 1,954 query tokens
over 2,044 cached tokens in a 989,669-page pool; the page assignment is drawn afresh."""

import math

import torch

NUM_QO_HEADS = 16
HEAD_DIM_CKV = 512
HEAD_DIM_KPE = 64
# The captured softmax scale: DeepSeek-V3's 1/sqrt(192) times its YaRN mscale squared,
# (0.1 ln 40 + 1)^2, rounded to float32 (0.1352337747812271); passed as a Python float.
SM_SCALE = 0.1352337747812271

# Query and cached tokens of each sequence in the captured batch (FlashInfer-Trace record
# 892d1b8f-f6fe-40ad-aa3f-b6d391753bd3), in batch order.
CAPTURED_Q_LENS = (
    20, 11, 83, 14, 36, 9, 17, 137, 96, 33, 4, 39, 21, 82, 1, 10, 420, 28, 20, 61, 390, 49, 176, 66,
    9, 32, 79, 11,
)
CAPTURED_KV_LENS = (
    23, 15, 85, 18, 39, 11, 21, 141, 99, 36, 6, 44, 23, 90, 4, 14, 423, 30, 23, 64, 393, 53, 180,
    70, 12, 34, 81, 12,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "kv_lens": CAPTURED_KV_LENS, "num_pages": 989669},
    # Same structure for CPU tests.
    "small": {"q_lens": (3, 10, 1, 20), "kv_lens": (5, 12, 4, 20), "num_pages": 300},
}


def _sequences(qo_indptr, kv_indptr, kv_indices, ckv_cache, kpe_cache, compute):
    """Each sequence's query range and its cached ckv [n_kv, 512] and kpe [n_kv, 64] rows."""
    q_starts, kv_starts = qo_indptr.tolist(), kv_indptr.tolist()
    for b in range(len(q_starts) - 1):
        pages = kv_indices[kv_starts[b] : kv_starts[b + 1]].long()
        ckv = ckv_cache[pages].flatten(0, 1).to(compute)
        kpe = kpe_cache[pages].flatten(0, 1).to(compute)
        yield q_starts[b], q_starts[b + 1], ckv, kpe


@torch.no_grad()
def reference(q_nope, q_pe, ckv_cache, kpe_cache, qo_indptr, kv_indptr, kv_indices, sm_scale):
    # q_nope: [total_q, 16, 512]; q_pe: [total_q, 16, 64]; ckv_cache: [num_pages, 1, 512];
    # kpe_cache: [num_pages, 1, 64]; qo_indptr, kv_indptr: [batch + 1] int32 offsets into the
    # queries and into kv_indices; kv_indices: [total_kv] int32 page ids; sm_scale: float.
    # The published formulation: one query token at a time.
    compute = torch.promote_types(q_nope.dtype, torch.float32)
    out = torch.empty(q_nope.shape, dtype=q_nope.dtype, device=q_nope.device)
    lse = torch.empty(q_nope.shape[:2], dtype=compute, device=q_nope.device)
    for qs, qe, ckv, kpe in _sequences(qo_indptr, kv_indptr, kv_indices, ckv_cache, kpe_cache,
                                       compute):
        n_kv = ckv.shape[0]
        delta = n_kv - (qe - qs)
        positions = torch.arange(n_kv, device=q_nope.device)
        for i in range(qe - qs):
            qn, qp = q_nope[qs + i].to(compute), q_pe[qs + i].to(compute)  # [16, 512], [16, 64]
            logits = (qn @ ckv.T + qp @ kpe.T) * sm_scale  # [16, n_kv]
            logits.masked_fill_(positions > i + delta, float("-inf"))
            lse[qs + i] = torch.logsumexp(logits, dim=-1) / math.log(2.0)
            out[qs + i] = (torch.softmax(logits, dim=-1) @ ckv).to(q_nope.dtype)
    return out, lse


@torch.no_grad()
def correctness_reference(q_nope, q_pe, ckv_cache, kpe_cache, qo_indptr, kv_indptr, kv_indices,
                          sm_scale):
    # The same computation as reference(), a whole sequence's queries at once.
    compute = torch.promote_types(q_nope.dtype, torch.float32)
    out = torch.empty(q_nope.shape, dtype=q_nope.dtype, device=q_nope.device)
    lse = torch.empty(q_nope.shape[:2], dtype=compute, device=q_nope.device)
    for qs, qe, ckv, kpe in _sequences(qo_indptr, kv_indptr, kv_indices, ckv_cache, kpe_cache,
                                       compute):
        n_kv = ckv.shape[0]
        delta = n_kv - (qe - qs)
        qn, qp = q_nope[qs:qe].to(compute), q_pe[qs:qe].to(compute)  # [n_q, 16, 512], [n_q, 16, 64]
        logits = (qn @ ckv.T + qp @ kpe.T) * sm_scale  # [n_q, 16, n_kv]
        positions = torch.arange(n_kv, device=q_nope.device)
        queries = torch.arange(qe - qs, device=q_nope.device)
        hidden = positions[None, :] > queries[:, None] + delta  # [n_q, n_kv]: causal mask
        logits.masked_fill_(hidden[:, None, :], float("-inf"))
        lse[qs:qe] = torch.logsumexp(logits, dim=-1) / math.log(2.0)
        out[qs:qe] = (torch.softmax(logits, dim=-1) @ ckv).to(q_nope.dtype)
    return out, lse


def _offsets(lengths, device):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return torch.tensor(offsets, dtype=torch.int32, device=device)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    q_lens, kv_lens, num_pages = p["q_lens"], p["kv_lens"], p["num_pages"]
    bf16 = torch.bfloat16
    q_nope = torch.randn(sum(q_lens), NUM_QO_HEADS, HEAD_DIM_CKV, device=device, dtype=bf16)
    q_pe = torch.randn(sum(q_lens), NUM_QO_HEADS, HEAD_DIM_KPE, device=device, dtype=bf16)
    ckv_cache = torch.randn(num_pages, 1, HEAD_DIM_CKV, device=device, dtype=bf16)
    kpe_cache = torch.randn(num_pages, 1, HEAD_DIM_KPE, device=device, dtype=bf16)
    # Pages are distinct and scattered over the pool, as after many allocations and frees.
    kv_indices = torch.randperm(num_pages, device=device)[: sum(kv_lens)].to(torch.int32)
    return [q_nope, q_pe, ckv_cache, kpe_cache, _offsets(q_lens, device), _offsets(kv_lens, device),
            kv_indices, SM_SCALE]
