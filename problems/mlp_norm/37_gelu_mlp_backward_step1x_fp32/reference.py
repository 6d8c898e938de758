"""Backward pass of the GELU MLP of Step1X-Edit's FLUX-style DiT blocks (img_mlp / txt_mlp of a
double-stream block: Linear(dim -> 4*dim) with bias, tanh-approximate GELU, Linear(4*dim -> dim)
with bias), as a training step computes it.

Given the MLP input x (the AdaLN-modulated LayerNorm output), the weights and the gradient of
the MLP output, the kernel recomputes the pre-activation h = x W1^T + b1 and returns the
gradients of x, W1, b1, W2 and b2 (in that order). b2 does not enter any gradient and is not an
input."""

import math

import torch

GELU_C = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715

WORKLOADS = {
    # 8,192 tokens x dim 2048, inner dim 4 x 2048 (mlp_ratio 4).
    "full": {"num_tokens": 8192, "dim": 2048, "inner_dim": 8192},
    "small": {"num_tokens": 48, "dim": 64, "inner_dim": 256},
}


def reference(x, w1, b1, w2, grad_out):
    # x: [num_tokens, dim]; w1: [inner_dim, dim]; b1: [inner_dim]; w2: [dim, inner_dim];
    # grad_out: [num_tokens, dim] = dL/d(MLP output).
    compute = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(compute)
    w1c = w1.to(compute)
    w2c = w2.to(compute)
    g = grad_out.to(compute)

    # Forward recompute: h = x W1^T + b1, a = gelu_tanh(h) = 0.5 h (1 + tanh(c (h + k h^3))).
    h = torch.addmm(b1.to(compute), xc, w1c.t())
    t = h.pow(3).mul_(GELU_K).add_(h).mul_(GELU_C).tanh_()
    a = t.add(1.0).mul_(0.5).mul_(h)
    grad_w2 = g.t() @ a  # [dim, inner_dim]
    del a
    grad_b2 = g.sum(dim=0)

    # gelu'(h) = 0.5 (1 + t) + 0.5 h (1 - t^2) c (1 + 3 k h^2)
    d = t.square().neg_().add_(1.0).mul_(h)
    d.mul_(h.square().mul_(3.0 * GELU_K).add_(1.0)).mul_(0.5 * GELU_C)
    d.add_(t.add_(1.0).mul_(0.5))
    del t, h
    grad_h = (g @ w2c).mul_(d)  # [num_tokens, inner_dim]
    del d

    grad_w1 = grad_h.t() @ xc  # [inner_dim, dim]
    grad_b1 = grad_h.sum(dim=0)
    grad_x = grad_h @ w1c  # [num_tokens, dim]
    return (
        grad_x.to(x.dtype),
        grad_w1.to(w1.dtype),
        grad_b1.to(b1.dtype),
        grad_w2.to(w2.dtype),
        grad_b2.to(w2.dtype),
    )


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, d, i = p["num_tokens"], p["dim"], p["inner_dim"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # MLP input: norm2(x) * (1 + scale) + shift, O(1) with per-channel scale and offset.
    x = randn(t, d) * (0.5 + torch.rand(d, device=device, dtype=f32)) + 0.2 * randn(d)
    # Trained linear layers at the N(0, 1/fan_in) scale; small biases. h = x W1^T + b1 is O(1),
    # so the GELU works in its curved region.
    w1 = randn(i, d) / d**0.5
    b1 = 0.05 * randn(i)
    w2 = randn(d, i) / i**0.5
    # Gradient reaching the MLP output: the residual-stream gradient times the per-channel
    # gate_mlp, with token-to-token variation.
    gate = 0.5 + torch.rand(d, device=device, dtype=f32)
    token_scale = torch.exp(0.5 * randn(t, 1))
    grad_out = 1e-2 * randn(t, d) * gate * token_scale
    return [x, w1, b1, w2, grad_out]
