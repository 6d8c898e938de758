"""Backward pass of the residual add + RMSNorm between sub-layers of Qwen3-4B (hidden 2560).

Forward (per token): s = x + residual is the new residual stream; y = weight * s / rms(s) with
rms(s) = sqrt(mean(s^2) + 1e-6) feeds the next sub-layer. s also flows on along the residual
stream, so its gradient is the sum of what comes back through the norm and what comes back
along the stream:
    n       = s * rstd,                    rstd = 1 / sqrt(mean(s^2) + eps)
    g       = grad_out * weight            (gradient w.r.t. the normalised row n)
    grad_s  = rstd * (g - n * mean(g * n)) + grad_residual
    grad_w  = sum over tokens of grad_out * n
grad_s is the gradient w.r.t. both x and residual (the add copies it to both), so it is
returned once. Everything is computed in float32 and rounded to bf16 once."""

import torch

HIDDEN = 2560
EPS = 1e-6  # rms_norm_eps of Qwen3-4B
CHUNK_TOKENS = 16384  # the reference streams over tokens to bound its float64 temporaries

WORKLOADS = {
    # 64 sequences x 8,192 tokens x hidden 2560 (a training micro-batch).
    "full": {"batch": 64, "seq_len": 8192, "hidden": HIDDEN},
    "small": {"batch": 2, "seq_len": 40, "hidden": 256},
}


def reference(x, residual, weight, grad_out, grad_residual):
    # x, residual, grad_out, grad_residual: [batch, seq_len, hidden]; weight: [hidden].
    compute = torch.promote_types(x.dtype, torch.float32)
    hidden = x.shape[-1]
    xs, rs = x.reshape(-1, hidden), residual.reshape(-1, hidden)
    dys, drs = grad_out.reshape(-1, hidden), grad_residual.reshape(-1, hidden)
    w = weight.to(compute)
    grad_input = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    gi = grad_input.view(-1, hidden)
    grad_weight = torch.zeros(hidden, dtype=compute, device=x.device)
    for start in range(0, xs.shape[0], CHUNK_TOKENS):
        rows = slice(start, start + CHUNK_TOKENS)
        s = xs[rows].to(compute) + rs[rows].to(compute)
        rstd = torch.rsqrt(s.square().mean(dim=-1, keepdim=True) + EPS)
        n = s.mul_(rstd)  # s is not needed any more: normalise in place
        dy = dys[rows].to(compute)
        grad_weight += (dy * n).sum(dim=0)
        g = dy * w  # dy may be a view of the input (float64 anchor): never in place
        dot = (g * n).mean(dim=-1, keepdim=True)
        gs = g.sub_(n.mul_(dot)).mul_(rstd)
        gs += drs[rows].to(compute)
        gi[rows] = gs
    return grad_input, grad_weight.to(weight.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    shape = (p["batch"], p["seq_len"], p["hidden"])
    bf16 = torch.bfloat16

    def randn_bf16(row_scale):
        # Drawn directly in bf16 (the full workload has 1.3 G elements per tensor).
        t = torch.randn(shape, device=device, dtype=bf16)
        return t.mul_(row_scale.to(bf16))

    def token_scale(sigma):
        return torch.exp(sigma * torch.randn(*shape[:2], 1, device=device, dtype=torch.float32))

    # The residual stream has grown to a few units by the middle layers and varies from token
    # to token; the sub-layer output added to it is O(1).
    residual = randn_bf16(3.0 * token_scale(0.5))
    x = randn_bf16(token_scale(0.3))
    weight = (1.0 + 0.25 * torch.randn(p["hidden"], device=device, dtype=torch.float32)).to(bf16)
    # Upstream gradients: through the next sub-layer (grad_out) and along the residual stream
    # (grad_residual), of comparable size, varying per token.
    grad_out = randn_bf16(1e-2 * token_scale(0.5))
    grad_residual = randn_bf16(4e-3 * token_scale(0.5))
    return [x, residual, weight, grad_out, grad_residual]
