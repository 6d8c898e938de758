"""Backward pass of the MLP of a Step1X-Edit DiT double-stream block (Linear with bias,
tanh-approximate GELU, Linear with bias), posed as SOL-ExecBench's recipe poses it: from the
gradient of the MLP output, the activations the forward pass saved (the MLP input, the first
Linear's output and the GELU output) and the two weights, produce the gradients with respect to
the input and to both Linear layers' weights and biases. Nothing is recomputed from the forward:
the saved activations are used as given (the published draws are independent).

With dy = grad_output, h = fc1_output, a = gelu_output, sums over all tokens:
    grad_fc2_weight = dy^T @ a               grad_fc2_bias = sum(dy)
    grad_h = (dy @ fc2_weight) * gelu'(h)    (tanh approximation)
    grad_fc1_weight = grad_h^T @ x           grad_fc1_bias = sum(grad_h)
    grad_x = grad_h @ fc1_weight
Computed in promote_types(dtype, float32)."""

import math

import torch

GELU_C = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715

WORKLOADS = {
    # 64 sequences x 128 tokens x dim 2048, inner dim 8192 (the published recipe's axes).
    "full": {"batch": 64, "seq_len": 128, "dim": 2048, "inner_dim": 8192},
    "small": {"batch": 2, "seq_len": 12, "dim": 32, "inner_dim": 128},
}


def reference(grad_output, hidden_states, fc1_weight, fc2_weight, fc1_output, gelu_output):
    # grad_output, hidden_states: [batch, seq_len, dim]; fc1_weight: [inner_dim, dim];
    # fc2_weight: [dim, inner_dim]; fc1_output, gelu_output: [batch, seq_len, inner_dim].
    # Returns (grad_hidden_states, grad_fc1_weight, grad_fc1_bias, grad_fc2_weight, grad_fc2_bias).
    compute = torch.promote_types(grad_output.dtype, torch.float32)
    dim, inner = hidden_states.shape[-1], fc1_output.shape[-1]
    dy = grad_output.to(compute).reshape(-1, dim)
    grad_fc2_weight = dy.t() @ gelu_output.to(compute).reshape(-1, inner)
    grad_fc2_bias = dy.sum(dim=0)

    h = fc1_output.to(compute).reshape(-1, inner)
    t = torch.tanh(GELU_C * (h + GELU_K * h.pow(3)))
    gelu_grad = 0.5 * (1.0 + t) + 0.5 * h * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_K * h * h)
    del t
    grad_h = (dy @ fc2_weight.to(compute)).mul_(gelu_grad)
    del gelu_grad
    x = hidden_states.to(compute).reshape(-1, dim)
    grad_fc1_weight = grad_h.t() @ x
    grad_fc1_bias = grad_h.sum(dim=0)
    grad_x = (grad_h @ fc1_weight.to(compute)).reshape(hidden_states.shape)
    return (grad_x.to(hidden_states.dtype), grad_fc1_weight.to(fc1_weight.dtype),
            grad_fc1_bias.to(fc1_weight.dtype), grad_fc2_weight.to(fc2_weight.dtype),
            grad_fc2_bias.to(fc2_weight.dtype))


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, d, i = p["batch"], p["seq_len"], p["dim"], p["inner_dim"]

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float32)

    # The recipe's distributions: every activation and gradient unit normal and drawn
    # independently (a kernel must use the saved activations as given), weights N(0, 1/fan_in).
    grad_output = randn(b, s, d)
    hidden_states = randn(b, s, d)
    fc1_weight = randn(i, d) / d**0.5
    fc2_weight = randn(d, i) / i**0.5
    fc1_output = randn(b, s, i)
    gelu_output = randn(b, s, i)
    return [grad_output, hidden_states, fc1_weight, fc2_weight, fc1_output, gelu_output]
