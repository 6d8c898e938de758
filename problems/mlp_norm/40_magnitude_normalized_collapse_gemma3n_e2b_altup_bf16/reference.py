"""Gemma-3n's AltUp "collapse": after the last decoder layer the model holds its hidden state as
4 AltUp streams. Stream 0 is kept; streams 1..3 are projected back by the
altup_unembed_projections (bias-free square Linear layers), each projection is rescaled per
token to the RMS magnitude of stream 0, and the 4 streams are averaged:

    target = sqrt(mean(h0^2))                                    per token
    p_i    = h_i @ W_i^T                                         i = 1, 2, 3
    p_i    = p_i * target / sqrt(max(mean(p_i^2), 1e-5))         per token
    out    = (h0 + p_1 + p_2 + p_3) / 4

(HF transformers Gemma3nTextModel.forward, "Per-layer inputs to single output"; the final
RMSNorm that follows is not part of this problem.) Computed in float32, rounded once."""

import torch

NUM_STREAMS = 4  # altup_num_inputs
MAGNITUDE_EPS = 1e-5  # floor of the mean square of a projected stream (epsilon_tensor)

WORKLOADS = {
    # 4 streams (3 projected) x 16,384 tokens x hidden 3072.
    "full": {
        "num_streams": NUM_STREAMS,
        "num_projected": NUM_STREAMS - 1,
        "num_tokens": 16384,
        "hidden": 3072,
    },
    "small": {"num_streams": NUM_STREAMS, "num_projected": NUM_STREAMS - 1, "num_tokens": 40, "hidden": 128},
}


def reference(hidden_states, unembed_weight):
    # hidden_states: [4, num_tokens, hidden]; unembed_weight: [3, hidden, hidden], PyTorch
    # Linear layout (p_i = h_i @ unembed_weight[i - 1]^T).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    h0 = hidden_states[0].to(compute)
    target = h0.square().mean(dim=-1, keepdim=True).sqrt_()
    total = h0.clone()
    for i in range(1, hidden_states.shape[0]):
        p = hidden_states[i].to(compute) @ unembed_weight[i - 1].to(compute).t()
        mean_square = p.square().mean(dim=-1, keepdim=True)
        magnitude = mean_square.clamp_min_(MAGNITUDE_EPS).sqrt_()
        total += p.mul_(target / magnitude)
        del p
    out = total.div_(hidden_states.shape[0])
    return out.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    s, t, h = p["num_streams"], p["num_tokens"], p["hidden"]
    bf16 = torch.bfloat16
    # Each stream's magnitude differs per token (log-normal around a few units), so the
    # rescaling to stream 0's magnitude is far from the identity.
    scale = 3.0 * torch.exp(0.6 * torch.randn(s, t, 1, device=device, dtype=torch.float32))
    hidden_states = torch.randn(s, t, h, device=device, dtype=bf16).mul_(scale.to(bf16))
    # One token of stream 2 is exactly zero: its projection is zero and only the 1e-5 floor of
    # the mean square keeps 0 / 0 out of the result.
    hidden_states[2, int(torch.randint(0, t, (1,)))] = 0
    # Bias-free square projections at the N(0, 1/hidden) scale.
    unembed_weight = (torch.randn(s - 1, h, h, device=device, dtype=torch.float32) / h**0.5).to(bf16)
    return [hidden_states, unembed_weight]
