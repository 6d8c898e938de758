"""Backward pass of the feed-forward sub-block of a post-LayerNorm (ALBERT-style) encoder layer,
as in the PL-BERT text encoder of Kokoro-82M, posed as SOL-ExecBench's recipe poses it: the FFN
(bias-free Linear, tanh-approximate GELU, bias-free Linear) runs on the hidden states, its result
is added back to them, and LayerNorm normalises the sum. From the gradient of the LayerNorm
output, the activations the forward pass saved (the FFN input, the first Linear's output, the
GELU output, the normalised sum and its variance) and the weights, produce the gradients with
respect to the hidden states and to every parameter, the biases' included.

With dy = grad_output, n = normalized, rstd = 1 / sqrt(var + eps), sums over all tokens:
    grad_ln_weight = sum(dy * n)             grad_ln_bias = sum(dy)
    q  = dy * ln_weight
    dr = rstd * (q - mean(q) - n * mean(q * n))           (means over hidden)
    grad_fc2_bias = sum(dr)                  grad_fc2_weight = dr^T @ gelu_output
    da = (dr @ fc2_weight) * gelu'(fc1_output)            (tanh approximation)
    grad_fc1_bias = sum(da)                  grad_fc1_weight = da^T @ hidden_states
    grad_hidden_states = dr + da @ fc1_weight             (the residual path adds dr)
Computed in promote_types(dtype, float32)."""

import math

import torch

LN_EPS = 1e-12  # ALBERT's layer_norm_eps: the eps every draw passes
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715

WORKLOADS = {
    # 64 utterances x 1,087 phoneme tokens x hidden 512, FFN width 2048.
    "full": {"batch": 64, "seq_len": 1087, "hidden": 512, "intermediate": 2048},
    "small": {"batch": 2, "seq_len": 7, "hidden": 32, "intermediate": 128},
}


def _gelu_tanh_and_derivative(a):
    t = torch.tanh(GELU_K * (a + GELU_C * a.pow(3)))
    value = 0.5 * a * (1.0 + t)
    derivative = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_C * a * a)
    return value, derivative


def reference(grad_output, hidden_states, fc1_weight, fc1_output, gelu_output, fc2_weight,
              normalized, var, ln_weight, eps):
    # grad_output, hidden_states, normalized: [batch, seq_len, hidden]; fc1_output, gelu_output:
    # [batch, seq_len, intermediate]; var: [batch, seq_len, 1]; fc1_weight: [intermediate,
    # hidden]; fc2_weight: [hidden, intermediate]; ln_weight: [hidden]; eps: float. Returns
    # (grad_hidden_states, grad_fc1_weight, grad_fc1_bias, grad_fc2_weight, grad_fc2_bias,
    #  grad_ln_weight, grad_ln_bias).
    compute = torch.promote_types(grad_output.dtype, torch.float32)
    hidden, inter = hidden_states.shape[-1], fc1_output.shape[-1]
    dy = grad_output.to(compute).reshape(-1, hidden)
    n = normalized.to(compute).reshape(-1, hidden)
    rstd = torch.rsqrt(var.to(compute).reshape(-1, 1) + eps)

    grad_ln_weight = (dy * n).sum(dim=0)
    grad_ln_bias = dy.sum(dim=0)
    q = dy * ln_weight.to(compute)
    dr = (q - q.mean(dim=-1, keepdim=True) - n * (q * n).mean(dim=-1, keepdim=True)) * rstd
    del q, n

    grad_fc2_bias = dr.sum(dim=0)
    grad_fc2_weight = dr.t() @ gelu_output.to(compute).reshape(-1, inter)
    _, gelu_grad = _gelu_tanh_and_derivative(fc1_output.to(compute).reshape(-1, inter))
    da = (dr @ fc2_weight.to(compute)).mul_(gelu_grad)
    del gelu_grad
    grad_fc1_bias = da.sum(dim=0)
    x = hidden_states.to(compute).reshape(-1, hidden)
    grad_fc1_weight = da.t() @ x
    grad_x = (dr + da @ fc1_weight.to(compute)).reshape(hidden_states.shape)
    return (grad_x.to(hidden_states.dtype), grad_fc1_weight.to(fc1_weight.dtype),
            grad_fc1_bias.to(fc1_weight.dtype), grad_fc2_weight.to(fc2_weight.dtype),
            grad_fc2_bias.to(fc2_weight.dtype), grad_ln_weight.to(ln_weight.dtype),
            grad_ln_bias.to(ln_weight.dtype))


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, i = p["batch"], p["seq_len"], p["hidden"], p["intermediate"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # As the recipe draws them: unit-normal hidden states, weights N(0, 1/fan_in), the norm
    # weight near its trained regime, and the saved activations from a real forward pass of
    # those values (bias-free Linear layers), so that they are consistent with each other.
    hidden_states = randn(b, s, h)
    fc1_weight = randn(i, h) / h**0.5
    fc2_weight = randn(h, i) / i**0.5
    ln_weight = randn(h) * 0.1 + 1.0
    fc1_output = hidden_states @ fc1_weight.t()
    gelu_output, _ = _gelu_tanh_and_derivative(fc1_output)
    residual = hidden_states + gelu_output @ fc2_weight.t()
    mean = residual.mean(dim=-1, keepdim=True)
    var = residual.var(dim=-1, keepdim=True, unbiased=False)
    normalized = (residual - mean) / torch.sqrt(var + LN_EPS)
    del residual, mean
    grad_output = randn(b, s, h)
    return [grad_output, hidden_states, fc1_weight, fc1_output, gelu_output, fc2_weight,
            normalized, var, ln_weight, LN_EPS]
