"""Fused residual add + RMSNorm of Llama-3.1-8B (hidden size 4096), as FlashInfer's
fused_add_rmsnorm computes it: the sum is formed in float32, stored as the new residual, and
normalised from the unrounded float32 sum."""

import torch

HIDDEN = 4096
EPS = 1e-5  # rms_norm_eps of Llama-3.1-8B

WORKLOADS = {
    "full": {"num_tokens": 14509, "hidden": HIDDEN},
    "small": {"num_tokens": 37, "hidden": 256},
}


def reference(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor):
    compute = torch.promote_types(x.dtype, torch.float32)
    total = x.to(compute) + residual.to(compute)
    inv_rms = torch.rsqrt(total.pow(2).mean(dim=-1, keepdim=True) + EPS)
    out = total * inv_rms * weight.to(compute)
    return out.to(x.dtype), total.to(residual.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h = p["num_tokens"], p["hidden"]
    # Decoder-layer activations: the attention / MLP output is O(1); the residual stream has
    # grown several times larger by the middle layers. The norm weight is learned around 1.
    x = torch.randn(t, h, device=device, dtype=torch.float32).to(torch.bfloat16)
    residual = (4.0 * torch.randn(t, h, device=device, dtype=torch.float32)).to(torch.bfloat16)
    weight = (1.0 + 0.25 * torch.randn(h, device=device, dtype=torch.float32)).to(torch.bfloat16)
    return [x, residual, weight]
