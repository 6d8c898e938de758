"""Backward pass of the SwiGLU MLP of Hermes-3-Llama-3.1-405B (the Llama-3.1-405B architecture:
hidden 16384, MLP width 53248, no biases), posed as SOL-ExecBench's recipe poses it: from the
gradient of the MLP output and the activations the forward pass saved — its input, the gate and
up projections and SiLU(gate) — and the three weights, produce the gradients with respect to
the input and to every weight. Nothing is recomputed from the forward: the saved activations are
used as given.

With dy = grad_output, s = silu_gate (the saved SiLU(gate)):
    a           = s * up                      (the down projection's input)
    grad_a      = dy @ w_down                 grad_w_down = dy^T @ a
    grad_up     = grad_a * s                  grad_s      = grad_a * up
    grad_gate   = grad_s * sigmoid(gate) * (1 + gate * (1 - sigmoid(gate)))
    grad_x      = grad_gate @ w_gate + grad_up @ w_up
    grad_w_gate = grad_gate^T @ x             grad_w_up   = grad_up^T @ x
Values are rounded to the input dtype where the published reference rounds them: every GEMM
runs on input-dtype operands with float32 accumulation (the published bf16 GEMMs), the products
with the saved activations are rounded, and SiLU's derivative is taken in
promote_types(dtype, float32) before grad_gate is rounded."""

import torch

WORKLOADS = {
    # 64 sequences x 128 tokens x hidden 16384, MLP width 53248 (the published recipe's axes).
    "full": {"batch": 64, "seq_len": 128, "hidden": 16384, "intermediate": 53248},
    "small": {"batch": 2, "seq_len": 8, "hidden": 64, "intermediate": 208},
}


def reference(grad_output, hidden_states, gate, up, silu_gate, w_gate, w_up, w_down):
    # grad_output, hidden_states: [batch, seq_len, hidden]; gate, up, silu_gate:
    # [batch, seq_len, intermediate]; w_gate, w_up: [intermediate, hidden]; w_down: [hidden,
    # intermediate]. Returns (grad_hidden_states, grad_w_gate, grad_w_up, grad_w_down).
    dtype = grad_output.dtype
    compute = torch.promote_types(dtype, torch.float32)
    hidden, inter = hidden_states.shape[-1], gate.shape[-1]
    dy = grad_output.reshape(-1, hidden)
    x = hidden_states.reshape(-1, hidden)
    s = silu_gate.reshape(-1, inter)
    u = up.reshape(-1, inter)

    a = (s.to(compute) * u.to(compute)).to(dtype)
    grad_w_down = dy.t() @ a  # GEMMs on dtype operands: float32 accumulation, rounded to dtype
    del a
    grad_a = (dy @ w_down).to(compute)
    grad_up = (grad_a * s.to(compute)).to(dtype)
    grad_s = (grad_a * u.to(compute)).to(dtype)
    del grad_a
    g = gate.reshape(-1, inter).to(compute)  # may be the input itself (float64): never in place
    sig = torch.sigmoid(g)
    dsilu = (1.0 - sig).mul_(g).add_(1.0).mul_(sig)  # sigmoid(g) * (1 + g * (1 - sigmoid(g)))
    del sig, g
    grad_gate = dsilu.mul_(grad_s.to(compute)).to(dtype)
    del dsilu, grad_s
    grad_x = ((grad_gate @ w_gate).to(compute) + (grad_up @ w_up).to(compute)).to(dtype)
    grad_w_gate = grad_gate.t() @ x
    grad_w_up = grad_up.t() @ x
    return grad_x.reshape(hidden_states.shape), grad_w_gate, grad_w_up, grad_w_down


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, i = p["batch"], p["seq_len"], p["hidden"], p["intermediate"]

    def randn(*shape):
        # Drawn directly in bf16, as the published problem draws them (the weights are 5.2 GB).
        return torch.randn(*shape, device=device, dtype=torch.bfloat16)

    # The recipe's distributions: every activation and gradient unit normal and drawn
    # independently (a kernel must use the saved activations as given), weights N(0, 1/fan_in).
    grad_output = randn(b, s, h)
    hidden_states = randn(b, s, h)
    gate = randn(b, s, i)
    up = randn(b, s, i)
    silu_gate = randn(b, s, i)
    w_gate = randn(i, h) / h**0.5
    w_up = randn(i, h) / h**0.5
    w_down = randn(h, i) / i**0.5
    return [grad_output, hidden_states, gate, up, silu_gate, w_gate, w_up, w_down]
