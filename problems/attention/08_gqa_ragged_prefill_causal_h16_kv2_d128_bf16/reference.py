"""Causal grouped-query attention prefill over ragged (contiguous, unpaged) keys and values, as
FlashInfer's BatchPrefillWithRaggedKVCache runs it for Qwen3-32B at tensor parallelism 4 (16
query heads in groups of 8 on 2 KV heads of dimension 128). Each sequence's new query tokens are
the last of its tokens: query i of a sequence with n_q queries and n_kv keys sees the keys 0 .. i
+ (n_kv - n_q). Returns the attention output and the base-2 log-sum-exp of the scaled logits.

The batch geometry is the published one (71 sequences, 15,687 query tokens and 17,699 keys): the
captured FlashInfer-Trace query lengths and the published problem's fixed cached prefixes (0 to 64
tokens); the values are drawn afresh."""

import math

import torch

NUM_QO_HEADS = 16
NUM_KV_HEADS = 2
QK_DIM = 128
VO_DIM = 128
SM_SCALE = 1.0 / math.sqrt(QK_DIM)  # 0.08838834764831843, passed as a Python float
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query tokens of each sequence in the captured batch (FlashInfer-Trace record
# 560c22ab-7115-40f8-b2d8-63b98563e53f), in batch order, and the tokens cached before them
# (the published problem's fixed prefixes).
CAPTURED_Q_LENS = (
    133, 181, 9, 8, 14, 43, 24, 29, 2383, 2678, 314, 14, 420, 134, 4, 15, 43, 2024, 23, 1618, 1086,
    300, 49, 7, 340, 422, 1, 68, 18, 7, 74, 3, 20, 21, 12, 31, 3, 7, 21, 40, 14, 107, 11, 6, 30, 9,
    26, 24, 301, 266, 247, 75, 49, 23, 9, 4, 441, 15, 349, 27, 14, 17, 54, 6, 13, 8, 147, 8, 7, 9,
    730,
)

PREFIX_LENS = (
    0, 64, 17, 39, 5, 58, 26, 44, 11, 0, 33, 61, 8, 22, 49, 0, 14, 55, 30, 3, 41, 64, 19, 7, 36, 0,
    52, 24, 60, 13, 28, 46, 1, 0, 57, 20, 35, 9, 63, 42, 16, 0, 50, 27, 4, 38, 59, 23, 12, 45, 0,
    31, 54, 18, 6, 40, 62, 29, 15, 48, 0, 34, 21, 51, 10, 56, 2, 43, 25, 37, 0,
)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "prefix_lens": PREFIX_LENS},
    # Same structure for CPU tests.
    "small": {"q_lens": (6, 17, 1, 40), "prefix_lens": (0, 5, 3, 64)},
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
    # q: [total_q, 16, 128]; k: [total_kv, 2, 128]; v: [total_kv, 2, 128]; qo_indptr, kv_indptr:
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
