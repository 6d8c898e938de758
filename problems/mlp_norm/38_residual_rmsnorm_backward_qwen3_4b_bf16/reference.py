"""Backward pass of the residual add + RMSNorm between sub-layers of Qwen3-4B (hidden 2560),
posed as SOL-ExecBench's recipe poses it: from the gradient of the norm's output and what the
forward pass saved (the normalised rows n = s * rstd and the per-row rstd), produce the
gradient of the norm's input s = hidden + residual, returned twice (the add copies it to both
the hidden states and the residual stream), and the weight gradient.

Per token, with g = grad_output:
    grad_s      = rstd * (g * weight - n * mean(g * weight * n))      (mean over hidden)
    grad_weight = sum over tokens of g * n
Computed in promote_types(dtype, float32); grad_s is rounded to the input dtype, grad_weight is
returned in that float32 (the published reference does not round it)."""

import torch

HIDDEN = 2560
CHUNK_TOKENS = 16384  # the reference streams over tokens to bound its float64 temporaries

WORKLOADS = {
    # 64 sequences x 8,192 tokens x hidden 2560 (a training micro-batch).
    "full": {"batch": 64, "seq_len": 8192, "hidden": HIDDEN},
    "small": {"batch": 2, "seq_len": 40, "hidden": 256},
}


def reference(grad_output, normalized, rstd, weight):
    # grad_output, normalized: [batch, seq_len, hidden]; rstd: [batch, seq_len, 1];
    # weight: [hidden]. Returns (grad_hidden_states, grad_residual, grad_weight).
    compute = torch.promote_types(grad_output.dtype, torch.float32)
    hidden = grad_output.shape[-1]
    dys, ns = grad_output.reshape(-1, hidden), normalized.reshape(-1, hidden)
    rs = rstd.reshape(-1, 1)
    w = weight.to(compute)
    grad_hidden = torch.empty(grad_output.shape, dtype=grad_output.dtype, device=grad_output.device)
    gh = grad_hidden.view(-1, hidden)
    grad_weight = torch.zeros(hidden, dtype=compute, device=grad_output.device)
    for start in range(0, dys.shape[0], CHUNK_TOKENS):
        rows = slice(start, start + CHUNK_TOKENS)
        g = dys[rows].to(compute)
        n = ns[rows].to(compute)
        grad_weight += (g * n).sum(dim=0)
        gn = g * w  # g may be a view of the input (float64 anchor): never in place
        dot = (gn * n).mean(dim=-1, keepdim=True)
        gh[rows] = gn.sub_(n.mul(dot)).mul_(rs[rows].to(compute))
    return grad_hidden, grad_hidden.clone(), grad_weight


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    shape = (p["batch"], p["seq_len"], p["hidden"])
    bf16 = torch.bfloat16

    # As the recipe draws them, in bf16 (the full workload has 1.3 G elements per tensor): the
    # norm's input rows at a per-token scale in [0.5, 2), the saved rstd and normalised rows of
    # that input (eps 1e-6, Qwen3-4B's rms_norm_eps), the weight near its trained regime, and
    # an output gradient correlated with the norm's output.
    x = torch.randn(shape, device=device, dtype=bf16)
    x.mul_(torch.rand(*shape[:2], 1, device=device, dtype=bf16) * 1.5 + 0.5)
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True, dtype=torch.float32) + 1e-6).to(bf16)
    normalized = x.mul_(rstd)
    weight = torch.randn(p["hidden"], device=device, dtype=bf16) * 0.1 + 1.0
    grad_output = torch.randn(shape, device=device, dtype=bf16).add_(0.5 * normalized * weight)
    return [grad_output, normalized, rstd, weight]
