"""Causal multi-head latent attention prefill over ragged, already decompressed keys and values,
as FlashInfer's BatchPrefillWithRaggedKVCache runs it for DeepSeek-V3's MLA at tensor parallelism
8 (16 heads; queries and keys of 192 = 128 no-RoPE + 64 RoPE dimensions, values and outputs of
128). Each sequence's new query tokens are the last of its tokens: query i of a sequence with n_q
queries and n_kv keys sees the keys 0 .. i + (n_kv - n_q). Returns the attention output and the
base-2 log-sum-exp of the scaled logits.

The batch geometry is the published one (63 sequences, 2,885 query tokens and 19,013 keys): the
captured FlashInfer-Trace query lengths and the published problem's fixed cached prefixes (256
tokens each); the values are drawn afresh."""

import math

import torch

NUM_QO_HEADS = 16
NUM_KV_HEADS = 16
QK_DIM = 192
VO_DIM = 128
SM_SCALE = 1.0 / math.sqrt(128)  # 0.08838834764831843 as published (1/sqrt(128), not 1/sqrt(192))
# Logit elements one chunk of queries may hold (memory bound of the reference, not a numeric
# choice: every query row is computed the same whatever the chunking).
CHUNK_ELEMENTS = 1 << 26

# Query tokens of each sequence in the captured batch (FlashInfer-Trace record
# 79a808fd-78a2-4cd9-a236-d8c3b018e1e4), in batch order, and the tokens cached before them
# (the published problem's fixed prefixes).
CAPTURED_Q_LENS = (
    39, 38, 39, 39, 39, 40, 40, 40, 41, 40, 40, 42, 42, 41, 42, 42, 43, 42, 43, 42, 43, 43, 44, 44,
    44, 46, 45, 44, 45, 45, 46, 46, 46, 46, 46, 47, 47, 47, 47, 48, 49, 48, 47, 48, 49, 50, 49, 49,
    50, 50, 51, 51, 50, 51, 51, 52, 50, 52, 53, 53, 54, 53, 52,
)

PREFIX_LENS = (256,) * len(CAPTURED_Q_LENS)

WORKLOADS = {
    "full": {"q_lens": CAPTURED_Q_LENS, "prefix_lens": PREFIX_LENS},
    # Same structure for CPU tests.
    "small": {"q_lens": (5, 9, 2, 12), "prefix_lens": (256, 256, 256, 256)},
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
    # q: [total_q, 16, 192]; k: [total_kv, 16, 192]; v: [total_kv, 16, 128]; qo_indptr, kv_indptr:
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
