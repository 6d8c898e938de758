"""Backward of the routed experts of MiMo-V2-Flash's MoE layer (hidden 4096, 256 routed experts, 8
per token; expert width 1024 as the recipe adapts it), as a training step runs it: the forward
y_t = sum_k w_tk * down_e(silu(gate_e(x_t)) * up_e(x_t)) over each token's chosen experts
e = topk_indices[t, k] (SwiGLU experts, weights [out, in], no biases) is recomputed expert by
expert, and from the output gradient dL/dy the reference produces the gradients of the hidden
states, of the routing weights and of every expert weight. All float32 (float64 in the anchor)."""

import torch
import torch.nn.functional as F

WORKLOADS = {
    # 6,144 tokens, hidden 4096, 256 experts of width 1024, 8 per token (12.9 GB of fp32 weights).
    "full": {"num_tokens": 6144, "hidden": 4096, "intermediate": 1024, "num_experts": 256, "top_k": 8},
    "small": {"num_tokens": 32, "hidden": 64, "intermediate": 32, "num_experts": 16, "top_k": 8},
}


@torch.no_grad()
def reference(grad_output, hidden_states, topk_indices, topk_weights, gate_weights, up_weights, down_weights):
    # grad_output, hidden_states: [T, H]; topk_indices: [T, K] int64 (distinct per token);
    # topk_weights: [T, K]; gate_weights, up_weights: [E, I, H]; down_weights: [E, H, I].
    grad_hidden_states = torch.zeros_like(hidden_states)
    grad_topk_weights = torch.zeros_like(topk_weights)
    grad_gate_weights = torch.zeros_like(gate_weights)
    grad_up_weights = torch.zeros_like(up_weights)
    grad_down_weights = torch.zeros_like(down_weights)
    for e in topk_indices.unique().tolist():
        rows, slot = torch.where(topk_indices == e)
        x = hidden_states[rows]
        w = topk_weights[rows, slot]
        gate = F.linear(x, gate_weights[e])
        up = F.linear(x, up_weights[e])
        silu = F.silu(gate)
        act = silu * up
        dy = grad_output[rows]
        grad_topk_weights[rows, slot] = (dy * F.linear(act, down_weights[e])).sum(dim=-1)
        dy = dy * w[:, None]  # the gradient of this expert's output
        grad_down_weights[e] = dy.t() @ act
        grad_act = dy @ down_weights[e]
        grad_up = grad_act * silu
        sig = torch.sigmoid(gate)
        grad_gate = grad_act * up * (sig * (1 + gate * (1 - sig)))  # d silu(g) / dg = s (1 + g (1 - s))
        grad_gate_weights[e] = grad_gate.t() @ x
        grad_up_weights[e] = grad_up.t() @ x
        grad_hidden_states.index_add_(0, rows, grad_gate @ gate_weights[e] + grad_up @ up_weights[e])
    return grad_hidden_states, grad_topk_weights, grad_gate_weights, grad_up_weights, grad_down_weights


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i, e, k = p["num_tokens"], p["hidden"], p["intermediate"], p["num_experts"], p["top_k"]
    grad_output = torch.randn(t, h, device=device)
    hidden_states = torch.randn(t, h, device=device)
    # k distinct experts per token, uniformly; weights a softmax over the k.
    topk_indices = torch.rand(t, e, device=device).argsort(dim=-1)[:, :k]
    topk_weights = torch.softmax(torch.randn(t, k, device=device), dim=-1)
    gate_weights = torch.randn(e, i, h, device=device) * 0.02
    up_weights = torch.randn(e, i, h, device=device) * 0.02
    down_weights = torch.randn(e, h, i, device=device) * 0.02
    return [grad_output, hidden_states, topk_indices, topk_weights, gate_weights, up_weights, down_weights]
