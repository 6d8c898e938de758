"""Backward pass of the SwiGLU MLP of Hermes-3-Llama-3.1-405B (the Llama-3.1-405B architecture:
hidden 16384, MLP width 53248, no biases), as a training step runs it: given the MLP's input, its
three weights and the gradient of the loss with respect to its output, recompute the gate and up
projections and return the gradients with respect to the input and to each weight.

    forward:  g = x W_gate^T,  u = x W_up^T,  h = silu(g) * u,  y = h W_down^T
    backward: dW_down = dy^T h,  dh = dy W_down,  du = dh * silu(g),
              dg = dh * u * silu'(g) with silu'(g) = sigmoid(g) * (1 + g * (1 - sigmoid(g))),
              dx = dg W_gate + du W_up,  dW_gate = dg^T x,  dW_up = du^T x
"""

import torch

WORKLOADS = {
    "full": {"num_tokens": 8192, "hidden": 16384, "intermediate": 53248},
    "small": {"num_tokens": 16, "hidden": 64, "intermediate": 208},
}


def reference(x, w_gate, w_up, w_down, grad_out):
    # x, grad_out: [num_tokens, hidden]; w_gate, w_up: [intermediate, hidden];
    # w_down: [hidden, intermediate]. Returns (grad_x, grad_w_gate, grad_w_up, grad_w_down).
    compute = torch.promote_types(x.dtype, torch.float32)
    xc = x.to(compute)
    dy = grad_out.to(compute)
    wg = w_gate.to(compute)
    wu = w_up.to(compute)
    g = xc @ wg.t()
    u = xc @ wu.t()
    sig = torch.sigmoid(g)
    act = g * sig  # silu(g)
    grad_w_down = (dy.t() @ (act * u)).to(w_down.dtype)
    dh = dy @ w_down.to(compute)
    del dy
    # In-place steps below only bound the temporaries ([num_tokens, intermediate] each).
    du = act.mul_(dh)  # dh * silu(g)
    del act
    dsilu = g.mul_(1.0 - sig).add_(1.0).mul_(sig)  # sigmoid(g) * (1 + g * (1 - sigmoid(g)))
    del g, sig
    dg = dh.mul_(u).mul_(dsilu)  # dh * u * silu'(g)
    del dh, u, dsilu
    grad_x = (dg @ wg + du @ wu).to(x.dtype)
    del wg, wu
    grad_w_gate = (dg.t() @ xc).to(w_gate.dtype)
    grad_w_up = (du.t() @ xc).to(w_up.dtype)
    return grad_x, grad_w_gate, grad_w_up, grad_w_down


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i = p["num_tokens"], p["hidden"], p["intermediate"]
    f32, bf16 = torch.float32, torch.bfloat16

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=f32)

    # The MLP's input is the post-attention RMSNorm's output: O(1) with the norm's per-channel gain.
    x = (randn(t, h) * (1.0 + 0.25 * randn(h))).to(bf16)
    # Projections at the N(0, 1/fan_in) scale of trained weights.
    w_gate = (randn(i, h) / h**0.5).to(bf16)
    w_up = (randn(i, h) / h**0.5).to(bf16)
    w_down = (randn(h, i) / i**0.5).to(bf16)
    # Upstream gradient: O(1) entries (the loss scale cancels in the comparison).
    grad_out = randn(t, h).to(bf16)
    return [x, w_gate, w_up, w_down, grad_out]
