"""The feed-forward network of FLUX.1's transformer blocks (diffusers FeedForward with
activation_fn="gelu-approximate"): Linear(3072 -> 12288) with bias, tanh-approximate GELU,
Linear(12288 -> 3072) with bias. Every double-stream block applies one to the image tokens and
one to the text tokens; the input is the AdaLN-modulated LayerNorm of the hidden states."""

import torch
import torch.nn.functional as F

WORKLOADS = {
    # 16,384 tokens (e.g. 4 images of 1024x1024 at 4,096 latent tokens each) x dim 3072.
    "full": {"num_tokens": 16384, "dim": 3072, "inner_dim": 12288},
    "small": {"num_tokens": 24, "dim": 64, "inner_dim": 256},
}


def reference(x, w1, b1, w2, b2):
    # x: [num_tokens, dim]; w1: [inner_dim, dim], b1: [inner_dim]; w2: [dim, inner_dim], b2: [dim].
    compute = torch.promote_types(x.dtype, torch.float32)
    h = F.linear(x.to(compute), w1.to(compute), b1.to(compute))
    h = F.gelu(h, approximate="tanh")
    out = F.linear(h, w2.to(compute), b2.to(compute))
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, d, i = p["num_tokens"], p["dim"], p["inner_dim"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # norm2(x) * (1 + scale_mlp) + shift_mlp: O(1) tokens whose channels differ in scale and offset.
    scale = 0.5 + torch.rand(d, device=device, dtype=f32)
    shift = 0.2 * randn(d)
    x = randn(t, d) * scale + shift
    # Linear layers at the N(0, 1/fan_in) scale of trained weights; small biases.
    w1 = randn(i, d) / d**0.5
    b1 = 0.05 * randn(i)
    w2 = randn(d, i) / i**0.5
    b2 = 0.05 * randn(d)
    return [x, w1, b1, w2, b2]
