"""A SwiGLU feed-forward network at the sizes of Parakeet's FastConformer encoder (d_model 1024,
feed-forward width 4 x 1024 = 4096, linear layers with biases): gate and up projections,
SiLU(gate) * up, down projection. (Parakeet's own Conformer feed-forward applies SiLU without a
gate; the published problem poses the gated SwiGLU form at these sizes, and so does this one.)"""

import torch
import torch.nn.functional as F

WORKLOADS = {
    # 8,192 encoder frames (e.g. 8 utterances of ~82 s after 8x subsampling) x d_model 1024.
    "full": {"num_tokens": 8192, "hidden": 1024, "intermediate": 4096},
    "small": {"num_tokens": 20, "hidden": 32, "intermediate": 128},
}


def reference(x, w_gate, b_gate, w_up, b_up, w_down, b_down):
    # x: [num_tokens, hidden]; w_gate, w_up: [intermediate, hidden] with biases [intermediate];
    # w_down: [hidden, intermediate] with bias [hidden].
    compute = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(compute)
    gate = F.linear(xc, w_gate.to(compute), b_gate.to(compute))
    up = F.linear(xc, w_up.to(compute), b_up.to(compute))
    h = F.silu(gate) * up  # silu(g) = g * sigmoid(g)
    out = F.linear(h, w_down.to(compute), b_down.to(compute))
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i = p["num_tokens"], p["hidden"], p["intermediate"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # The feed-forward module's input is LayerNorm-ed: O(1) features with per-channel gain and bias.
    x = randn(t, h) * (1.0 + 0.2 * randn(h)) + 0.1 * randn(h)
    # Linear layers at the N(0, 1/fan_in) scale of trained weights; small biases.
    w_gate = randn(i, h) / h**0.5
    b_gate = 0.1 * randn(i)
    w_up = randn(i, h) / h**0.5
    b_up = 0.1 * randn(i)
    w_down = randn(h, i) / i**0.5
    b_down = 0.05 * randn(h)
    return [x, w_gate, b_gate, w_up, b_up, w_down, b_down]
