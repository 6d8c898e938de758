"""The second half of a Hermes-3-Llama-3.1-405B decoder layer (the Llama-3.1-405B architecture:
hidden 16384, MLP width 53248, RMSNorm eps 1e-5, no biases): the attention output is added to
the residual stream, the sum is normalised by the post-attention RMSNorm, and the SwiGLU MLP
(gate, up, SiLU(gate) * up, down) runs on it. As in vLLM's decoder layer, the MLP output and the
updated residual stream are returned separately (the next layer's fused add + RMSNorm adds them)."""

import torch
import torch.nn.functional as F

EPS = 1e-5  # rms_norm_eps of Llama-3.1-405B

WORKLOADS = {
    "full": {"num_tokens": 8192, "hidden": 16384, "intermediate": 53248},
    "small": {"num_tokens": 16, "hidden": 64, "intermediate": 208},
}


def reference(x, residual, norm_weight, w_gate, w_up, w_down):
    # x, residual: [num_tokens, hidden]; norm_weight: [hidden];
    # w_gate, w_up: [intermediate, hidden]; w_down: [hidden, intermediate].
    compute = torch.promote_types(x.dtype, torch.float32)
    s = x.to(compute) + residual.to(compute)
    normed = s * torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + EPS) * norm_weight.to(compute)
    gate = F.linear(normed, w_gate.to(compute))
    up = F.linear(normed, w_up.to(compute))
    del normed
    h = F.silu(gate)
    del gate
    h.mul_(up)
    del up
    mlp_out = F.linear(h, w_down.to(compute))
    return mlp_out.to(x.dtype), s.to(residual.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i = p["num_tokens"], p["hidden"], p["intermediate"]
    f32, bf16 = torch.float32, torch.bfloat16

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # The attention output is O(1); the residual stream has grown larger by the middle layers.
    x = randn(t, h).to(bf16)
    residual = (2.0 * randn(t, h)).to(bf16)
    norm_weight = (1.0 + 0.25 * randn(h)).to(bf16)
    # Projections at the N(0, 1/fan_in) scale of trained weights.
    w_gate = (randn(i, h) / h**0.5).to(bf16)
    w_up = (randn(i, h) / h**0.5).to(bf16)
    w_down = (randn(h, i) / i**0.5).to(bf16)
    return [x, residual, norm_weight, w_gate, w_up, w_down]
