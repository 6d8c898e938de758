"""RMSNorm over rows of 128 (FlashInfer rmsnorm, workload rmsnorm_h128 of Qwen3-30B-A3B).

Qwen3-30B-A3B normalises every query and key head (head_dim 128) with its own RMSNorm before
RoPE (q_norm / k_norm). The serving engine flattens the heads of a batch of tokens into rows of
128 and calls FlashInfer's rmsnorm on them: per row, in float32,
    out = x / sqrt(mean(x^2) + 1e-6) * weight,
rounded to bf16 once at the end."""

import torch

HEAD_DIM = 128
EPS = 1e-6  # rms_norm_eps of Qwen3-30B-A3B

WORKLOADS = {
    # 520,128 rows of 128: the heads of a FlashInfer-Trace prefill batch, flattened.
    "full": {"batch_size": 520128, "hidden": HEAD_DIM},
    "small": {"batch_size": 300, "hidden": HEAD_DIM},
}


@torch.no_grad()
def reference(hidden_states: torch.Tensor, weight: torch.Tensor):
    # hidden_states: [batch_size, 128]; weight: [128].
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x = hidden_states.to(compute)
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (x * inv_rms * weight.to(compute)).to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    rows, h = p["batch_size"], p["hidden"]
    # As the published definition draws them: standard-normal rows, and the norm weight near the
    # trained regime, 1 + 0.1 N(0, 1) drawn in float32.
    hidden_states = torch.randn(rows, h, device=device).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(h, device=device, dtype=torch.float32)).to(torch.bfloat16)
    return [hidden_states, weight]
