"""Backward pass of the feed-forward sub-block of a post-LayerNorm (ALBERT-style) encoder layer,
as in Kokoro-82M's PL-BERT text encoder, at the published workload's width 512 and FFN width
2048: the FFN (Linear, tanh-approximate GELU, Linear) runs on the attention sub-block's output x,
its result is added back to x, and the sum goes through LayerNorm (eps 1e-12).

    forward:  a = x W1^T + b1,  z = gelu_tanh(a),  f = z W2^T + b2,  r = x + f,
              y = (r - mean(r)) / sqrt(var(r) + eps) * gamma + beta
    backward (given dy): with rhat = normalised r and sigma = sqrt(var(r) + eps),
              dgamma = sum_tokens dy * rhat,  dbeta = sum_tokens dy,
              dr = (g - mean(g) - rhat * mean(g * rhat)) / sigma  with g = dy * gamma,
              db2 = sum_tokens dr,  dW2 = dr^T z,  dz = dr W2,  da = dz * gelu_tanh'(a),
              db1 = sum_tokens da,  dW1 = da^T x,  dx = dr + da W1
"""

import math

import torch

LN_EPS = 1e-12  # ALBERT's layer_norm_eps
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715

WORKLOADS = {
    # 64 sequences x 1,087 positions x width 512, FFN width 2048.
    "full": {"batch": 64, "seq_len": 1087, "hidden": 512, "intermediate": 2048},
    "small": {"batch": 2, "seq_len": 7, "hidden": 32, "intermediate": 128},
}


def reference(x, w1, b1, w2, b2, ln_weight, ln_bias, grad_out):
    # x, grad_out: [batch, seq_len, hidden]; w1: [intermediate, hidden], b1: [intermediate];
    # w2: [hidden, intermediate], b2: [hidden]; ln_weight, ln_bias: [hidden].
    # Returns (grad_x, grad_w1, grad_b1, grad_w2, grad_b2, grad_ln_weight, grad_ln_bias).
    compute = torch.promote_types(x.dtype, torch.float32)
    hidden = x.shape[-1]
    xc = x.to(compute).reshape(-1, hidden)
    dy = grad_out.to(compute).reshape(-1, hidden)
    w1c, w2c, gamma = w1.to(compute), w2.to(compute), ln_weight.to(compute)

    # Forward, keeping what the backward needs.
    a = torch.addmm(b1.to(compute), xc, w1c.t())
    t = torch.tanh(GELU_K * (a + GELU_C * a.pow(3)))
    z = 0.5 * a * (1.0 + t)  # gelu(a, approximate="tanh")
    r = torch.addmm(b2.to(compute), z, w2c.t()) + xc
    mean = r.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((r - mean).pow(2).mean(dim=-1, keepdim=True) + LN_EPS)
    rhat = (r - mean) * rstd
    del r

    # LayerNorm backward.
    grad_ln_weight = (dy * rhat).sum(dim=0)
    grad_ln_bias = dy.sum(dim=0)
    g = dy * gamma
    dr = (g - g.mean(dim=-1, keepdim=True) - rhat * (g * rhat).mean(dim=-1, keepdim=True)) * rstd
    del g, rhat

    # Second linear, then GELU, then first linear; the residual passes dr straight to x.
    grad_b2 = dr.sum(dim=0)
    grad_w2 = dr.t() @ z
    del z
    dz = dr @ w2c
    gelu_grad = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_C * a * a)
    del t
    da = dz * gelu_grad
    del dz, gelu_grad, a
    grad_b1 = da.sum(dim=0)
    grad_w1 = da.t() @ xc
    grad_x = (dr + da @ w1c).reshape(x.shape)
    return (grad_x.to(x.dtype), grad_w1.to(w1.dtype), grad_b1.to(b1.dtype), grad_w2.to(w2.dtype),
            grad_b2.to(b2.dtype), grad_ln_weight.to(ln_weight.dtype), grad_ln_bias.to(ln_bias.dtype))


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, i = p["batch"], p["seq_len"], p["hidden"], p["intermediate"]
    f32 = torch.float32

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # x is the attention sub-block's LayerNorm output: O(1) with per-channel gain and bias.
    x = randn(b, s, h) * (1.0 + 0.2 * randn(h)) + 0.1 * randn(h)
    # Linear layers at the N(0, 1/fan_in) scale of trained weights; small biases.
    w1 = randn(i, h) / h**0.5
    b1 = 0.1 * randn(i)
    w2 = randn(h, i) / i**0.5
    b2 = 0.05 * randn(h)
    ln_weight = 1.0 + 0.2 * randn(h)
    ln_bias = 0.05 * randn(h)
    # Upstream gradient: O(1) entries (the loss scale cancels in the comparison).
    grad_out = randn(b, s, h)
    return [x, w1, b1, w2, b2, ln_weight, ln_bias, grad_out]
