"""Gated linear attention (GLA) as a recurrence over time (flash-linear-attention's
naive_recurrent_gla), with GLA's head geometry: 4 heads of key dimension 256 and value
dimension 512. The matrix state decays per key channel, by exp(gk) with gk a log-decay for
every (token, head, key dim), and accumulates k^T v:

    S = S * exp(gk_t)[:, None] + k_t^T v_t;  o_t = (q_t / sqrt(256)) @ S

from a zero state, with no normalisation. Returns every token's output, rounded to the input
dtype. The loop over time is the published formulation (the eager baseline)."""

import torch
import torch.nn.functional as F

GATE_LOGIT_NORMALIZER = 16.0  # gk = logsigmoid(N(0, 1)) / 16

WORKLOADS = {
    "full": {"batch": 8, "seq_len": 1024, "heads": 4, "key_dim": 256, "value_dim": 512},
    "small": {"batch": 2, "seq_len": 24, "heads": 2, "key_dim": 256, "value_dim": 512},
}


@torch.no_grad()
def reference(q, k, v, gk):
    # q, k, gk: [B, T, H, K]; v: [B, T, H, V]. Computed head-first, [B, H, T, .].
    dtype = q.dtype
    compute = torch.promote_types(q.dtype, torch.float32)
    q, k, v, gk = (x.transpose(1, 2).to(compute) for x in (q, k, v, gk))
    batch, heads, steps, key_dim = q.shape
    scale = key_dim ** -0.5
    out = torch.zeros_like(v)
    s = torch.zeros(batch, heads, key_dim, v.shape[-1], dtype=compute, device=q.device)
    for t in range(steps):
        decay = gk[:, :, t].exp()
        s = s * decay[..., None] + k[:, :, t, :, None] * v[:, :, t, None, :]
        out[:, :, t] = (q[:, :, t, :, None] * scale * s).sum(-2)
    return out.transpose(1, 2).to(dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t, h = p["batch"], p["seq_len"], p["heads"]
    bf16 = dict(device=device, dtype=torch.bfloat16)
    q = torch.randn(b, t, h, p["key_dim"], **bf16)
    k = torch.randn(b, t, h, p["key_dim"], **bf16)
    v = torch.randn(b, t, h, p["value_dim"], **bf16)
    # Per-channel log-decay in (-inf, 0), mostly near -0.05: drawn in float32, rounded to bf16.
    gk = (F.logsigmoid(torch.randn(b, t, h, p["key_dim"], device=device, dtype=torch.float32))
          / GATE_LOGIT_NORMALIZER).to(torch.bfloat16)
    return [q, k, v, gk]
