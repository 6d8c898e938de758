"""The feed-forward network of FLUX.1's transformer blocks (diffusers FeedForward with
activation_fn="gelu-approximate"): Linear(3072 -> 12288) with bias, tanh-approximate GELU,
Linear(12288 -> 3072) with bias, applied to a [batch, seq_len, 3072] block of hidden states (the
AdaLN-modulated LayerNorm output). Posed as SOL-ExecBench's recipe poses it: the five tensors in
the order x, w1, b1, w2, b2, all float32 and N(0, 1)-distributed (weights at 1/sqrt(fan_in))."""

import torch
import torch.nn.functional as F

WORKLOADS = {
    # 32 sequences x 512 tokens x dim 3072, inner dim 12288 (the published recipe's axes).
    "full": {"batch": 32, "seq_len": 512, "dim": 3072, "inner_dim": 12288},
    "small": {"batch": 2, "seq_len": 12, "dim": 64, "inner_dim": 256},
}


def reference(x, w1, b1, w2, b2):
    # x: [batch, seq_len, dim]; w1: [inner_dim, dim], b1: [inner_dim]; w2: [dim, inner_dim], b2: [dim].
    compute = torch.promote_types(x.dtype, torch.float32)
    h = F.linear(x.to(compute), w1.to(compute), b1.to(compute))
    h = F.gelu(h, approximate="tanh")
    out = F.linear(h, w2.to(compute), b2.to(compute))
    return out.to(x.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, i = p["batch"], p["seq_len"], p["dim"], p["inner_dim"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: unit-normal activations and biases, weights N(0, 1/fan_in).
    x = randn(b, s, d)
    w1 = randn(i, d) / d**0.5
    b1 = randn(i)
    w2 = randn(d, i) / i**0.5
    b2 = randn(d)
    return [x, w1, b1, w2, b2]
