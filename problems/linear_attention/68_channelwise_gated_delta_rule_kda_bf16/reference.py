"""Kimi Delta Attention (KDA) as a recurrence over time (flash-linear-attention's
naive_recurrent_kda), with KDA's head geometry: 16 heads of key and value dimension 128. Like the
gated delta rule, but the decay is per key channel: g is a log-decay for every (token, head,
key dim). Queries and keys are L2-normalised per head, the query is scaled by 1/sqrt(128):

    S = S * exp(g_t)[:, None];  S = S + (beta_t k_t)^T (v_t - k_t @ S);  o_t = q_t @ S

from a zero state. Returns every token's output, rounded to the input dtype. The loop over time
is the published formulation (the eager baseline)."""

import torch
import torch.nn.functional as F

GATE_LOGIT_NORMALIZER = 16.0  # g = logsigmoid(N(0, 1)) / 16

WORKLOADS = {
    "full": {"batch": 8, "seq_len": 1024, "heads": 16, "head_dim": 128},
    "small": {"batch": 2, "seq_len": 24, "heads": 3, "head_dim": 128},
}


@torch.no_grad()
def reference(q, k, v, g, beta):
    # q, k: [B, T, H, K]; v: [B, T, HV, V]; g: [B, T, HV, K] log-decay; beta: [B, T, HV].
    dtype = v.dtype
    compute = torch.promote_types(v.dtype, torch.float32)
    batch, steps, heads, key_dim = q.shape
    value_heads, value_dim = v.shape[2], v.shape[3]
    group = value_heads // heads
    q, k, v, g, beta = (x.to(compute) for x in (q, k, v, g, beta))
    q = F.normalize(q, p=2, dim=-1).repeat_interleave(group, dim=2) * key_dim ** -0.5
    k = F.normalize(k, p=2, dim=-1).repeat_interleave(group, dim=2)
    s = torch.zeros(batch, value_heads, key_dim, value_dim, dtype=compute, device=q.device)
    out = torch.zeros_like(v)
    for t in range(steps):
        key = k[:, t]
        s = s * g[:, t, :, :, None].exp()
        error = v[:, t] - (key[..., None] * s).sum(-2)  # v - k @ S
        s = s + torch.einsum("bhk,bhv->bhkv", beta[:, t, :, None] * key, error)
        out[:, t] = torch.einsum("bhk,bhkv->bhv", q[:, t], s)
    return out.to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t, h, d = p["batch"], p["seq_len"], p["heads"], p["head_dim"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    q = torch.randn(b, t, h, d, **bf16)
    k = torch.randn(b, t, h, d, **bf16)
    v = torch.randn(b, t, h, d, **bf16)
    # Per-channel log-decay in (-inf, 0), mostly near -0.05: drawn in float32, rounded to bf16.
    g = (F.logsigmoid(torch.randn(b, t, h, d, device=device, dtype=torch.float32))
         / GATE_LOGIT_NORMALIZER).to(torch.bfloat16)
    beta = torch.randn(b, t, h, **bf16).sigmoid()  # the sigmoid is taken in bf16
    return [q, k, v, g, beta]
