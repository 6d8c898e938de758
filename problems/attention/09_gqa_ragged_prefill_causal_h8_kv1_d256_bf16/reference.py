"""Causal grouped-query attention prefill over ragged (contiguous, unpaged) keys and values, as
FlashInfer's BatchPrefillWithRaggedKVCache runs it for Qwen3-Next-80B-A3B at tensor parallelism 2
(8 query heads on 1 KV head of dimension 256). Each sequence's new query tokens are the last of
its tokens: query i of a sequence with n_q queries and n_kv keys sees the keys 0 .. i + (n_kv -
n_q). Returns the attention output and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the published one (63 sequences, 3,053 query tokens and 4,841 keys): the
captured FlashInfer-Trace query lengths and the published problem's fixed cached prefixes (0 to 64
tokens); the values are drawn afresh."""

import math

import torch

NUM_QO_HEADS = 8
NUM_KV_HEADS = 1
QK_DIM = 256
VO_DIM = 256
SM_SCALE = 1.0 / math.sqrt(128)  # 0.08838834764831843 as published (1/sqrt(128), not 1/sqrt(256))
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query tokens of each sequence in the captured batch (FlashInfer-Trace record
# 96ee50a6-c16e-4231-9253-e4565ed6213d), in batch order, and the tokens cached before them
# (the published problem's fixed prefixes).
CAPTURED_Q_LENS = (
    35, 71, 76, 69, 62, 52, 61, 39, 102, 94, 64, 44, 63, 37, 49, 56, 53, 58, 47, 18, 61, 83, 49, 63,
    64, 19, 82, 63, 17, 39, 59, 46, 66, 86, 41, 58, 36, 41, 33, 18, 19, 25, 32, 39, 68, 47, 73, 41,
    50, 13, 27, 59, 22, 29, 66, 23, 20, 37, 32, 40, 19, 55, 43,
)

PREFIX_LENS = (
    0, 64, 17, 39, 5, 58, 26, 44, 11, 0, 33, 61, 8, 22, 49, 0, 14, 55, 30, 3, 41, 64, 19, 7, 36, 0,
    52, 24, 60, 13, 28, 46, 1, 0, 57, 20, 35, 9, 63, 42, 16, 0, 50, 27, 4, 38, 59, 23, 12, 45, 0,
    31, 54, 18, 6, 40, 62, 29, 15, 48, 0, 34, 21,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "prefix_lens": PREFIX_LENS},
    # Same structure for CPU tests.
    "small": {"q_lens": (5, 12, 1, 30), "prefix_lens": (3, 0, 9, 20)},
}


def _attend(q, k, v, sm_scale, out, lse):
    # q: [n_q, heads, d] (one sequence's queries), k: [n_kv, kv heads, d], v: [n_kv, kv heads, dv],
    # all in the compute dtype; writes out [n_q, heads, dv] (rounded to out's dtype) and lse
    # [n_q, heads].
    n_q, heads, d = q.shape
    n_kv, kv_heads, dv = v.shape
    group = heads // kv_heads
    delta = n_kv - n_q  # query i is key i + delta
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
        out[start:stop] = o.reshape(stop - start, heads, dv).to(out.dtype)


@torch.no_grad()
def reference(q, k, v, qo_indptr, kv_indptr, sm_scale):
    # q: [total_q, 8, 256]; k: [total_kv, 1, 256]; v: [total_kv, 1, 256]; qo_indptr, kv_indptr:
    # [batch + 1] int32 offsets into q and into k / v; sm_scale: float.
    compute = torch.promote_types(q.dtype, torch.float32)
    out = torch.empty((*q.shape[:2], v.shape[2]), dtype=q.dtype, device=q.device)
    lse = torch.empty(q.shape[:2], dtype=compute, device=q.device)
    q_starts, kv_starts = qo_indptr.tolist(), kv_indptr.tolist()
    for b in range(len(q_starts) - 1):
        qs, qe = q_starts[b], q_starts[b + 1]
        ks, ke = kv_starts[b], kv_starts[b + 1]
        _attend(q[qs:qe].to(compute), k[ks:ke].to(compute), v[ks:ke].to(compute), sm_scale,
                out[qs:qe], lse[qs:qe])
    return out, lse


def _offsets(lengths, device):
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return torch.tensor(offsets, dtype=torch.int32, device=device)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    q_lens = p["q_lens"]
    kv_lens = [n + prefix for n, prefix in zip(q_lens, p["prefix_lens"])]
    q = torch.randn(sum(q_lens), NUM_QO_HEADS, QK_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(sum(kv_lens), NUM_KV_HEADS, QK_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(sum(kv_lens), NUM_KV_HEADS, VO_DIM, device=device, dtype=torch.bfloat16)
    return [q, k, v, _offsets(q_lens, device), _offsets(kv_lens, device), SM_SCALE]
