"""The AltUp collapse at the end of Gemma-3n's text decoder, posed as SOL-ExecBench's recipe
poses it: three AltUp streams [3, batch, seq_len, hidden]; stream 0 is kept, streams 1 and 2
are mapped back by their own bias-free square projections (two weight inputs), every projected
stream is rescaled per token so that its RMS equals that of stream 0 (the mean square floored at
eps), and the three streams are averaged.

    target = sqrt(mean(h0^2))
    p_i    = h_i @ W_i^T,   q_i = p_i * target / sqrt(max(mean(p_i^2), eps))     (i = 1, 2)
    out    = (h0 + q_1 + q_2) / 3                                   (means over hidden)
Computed in promote_types(dtype, float32) — the published reference widens the streams and the
weights before the projections — and rounded to the input dtype once."""

import torch

MAGNITUDE_EPS = 1e-5  # floor of a projected stream's mean square (epsilon_tensor): every draw's eps

WORKLOADS = {
    # 3 streams x 64 sequences x 256 tokens x hidden 3072 (the published recipe's axes).
    "full": {"num_streams": 3, "batch": 64, "seq_len": 256, "hidden": 3072},
    "small": {"num_streams": 3, "batch": 2, "seq_len": 10, "hidden": 128},
}


def reference(hidden_states, unembed_weight_1, unembed_weight_2, eps):
    # hidden_states: [3, batch, seq_len, hidden]; unembed_weight_i: [hidden, hidden] (PyTorch
    # Linear layout, p_i = h_i @ W_i^T); eps: float.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    base = hidden_states[0].to(compute)
    target = base.pow(2).mean(dim=-1, keepdim=True).sqrt()
    total = base.clone()
    for stream, weight in ((1, unembed_weight_1), (2, unembed_weight_2)):
        projected = hidden_states[stream].to(compute) @ weight.to(compute).t()
        magnitude = projected.pow(2).mean(dim=-1, keepdim=True).clamp_min(eps).sqrt()
        total += projected.mul_(target / magnitude)
        del projected
    return total.div_(3.0).to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, b, s, h = p["num_streams"], p["batch"], p["seq_len"], p["hidden"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.bfloat16)

    # The recipe's distributions, in bf16: unit-normal streams and unit-normal projection
    # weights (the magnitude matching makes their scale immaterial).
    hidden_states = randn(n, b, s, h)
    unembed_weight_1 = randn(h, h)
    unembed_weight_2 = randn(h, h)
    return [hidden_states, unembed_weight_1, unembed_weight_2, MAGNITUDE_EPS]
