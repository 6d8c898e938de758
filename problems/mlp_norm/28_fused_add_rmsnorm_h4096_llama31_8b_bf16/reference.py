"""Fused residual add + RMSNorm of Llama-3.1-8B (hidden size 4096), as the FlashInfer-Trace
definition fused_add_rmsnorm_h4096 states it: the sub-layer output and the residual are added in
float32 and the unrounded sum is normalised; the normalised, weighted sum is returned in bf16."""

import torch

HIDDEN = 4096
EPS = 1e-5  # rms_norm_eps of Llama-3.1-8B

WORKLOADS = {
    "full": {"num_tokens": 14509, "hidden": HIDDEN},  # the captured prefill batch
    "small": {"num_tokens": 37, "hidden": HIDDEN},
}


@torch.no_grad()
def reference(hidden_states: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    total = hidden_states.to(compute) + residual.to(compute)
    inv_rms = torch.rsqrt(total.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (total * inv_rms * weight.to(compute)).to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h = p["num_tokens"], p["hidden"]
    hidden_states = torch.randn(t, h, device=device).to(torch.bfloat16)
    residual = torch.randn(t, h, device=device).to(torch.bfloat16)
    # The norm weight near the trained regime: 1 + 0.1 N(0, 1), drawn in float32.
    weight = (1.0 + 0.1 * torch.randn(h, device=device, dtype=torch.float32)).to(torch.bfloat16)
    return [hidden_states, residual, weight]
