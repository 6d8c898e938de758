"""Backward of the router of Qwen3-Coder-30B-A3B's MoE block (hidden 2048, 128 experts, 8 per token,
norm_topk_prob), from the activations its forward pass saved. The forward is Hugging Face's
Qwen3MoeSparseMoeBlock router: logits = x @ W^T (bf16), probs = softmax(logits) in float32, the 8
best probabilities w with their experts, routing weights w / sum(w) rounded to bf16, and the
dispatch mask one_hot(experts) [experts, 8, tokens]; the block also returns the logits (for the
load-balancing loss). Given the gradients of the routing weights, of the dispatch mask and of the
returned logits, the backward runs through the normalisation, the top-k gather, the softmax and
the router projection, and returns the gradients of the hidden states and of the router weight.

The dispatch mask's gradient passes straight through to the probabilities (d mask[e, k, t] /
d probs[t, e] = 1: the straight-through estimator of the one-hot), summed over the 8 choices. The
chain runs in the saved probabilities' float32; the logits' gradient is rounded to bf16 (the
logits' dtype), then the returned logits' gradient is added in bf16 and the two GEMMs run on bf16
operands with float32 accumulation."""

import torch

TOP_K = 8

WORKLOADS = {
    # 65,536 tokens, hidden 2048, 128 experts.
    "full": {"num_tokens": 65536, "hidden": 2048, "num_experts": 128},
    "small": {"num_tokens": 64, "hidden": 64, "num_experts": 128},
}


@torch.no_grad()
def reference(
    hidden_states,
    gate_weight,
    routing_probs,
    selected_experts,
    routing_weights_sum,
    grad_routing_weights,
    grad_expert_mask,
    grad_router_logits,
):
    # hidden_states: [T, H] bf16; gate_weight: [E, H] bf16; routing_probs: [T, E] float32 (saved
    # softmax); selected_experts: [T, 8] int64 (saved); routing_weights_sum: [T, 1] float32 (saved
    # sum of the 8 probabilities); grad_routing_weights: [T, 8] bf16; grad_expert_mask: [E, 8, T]
    # bf16; grad_router_logits: [T, E] bf16.
    dtype = hidden_states.dtype
    wide = routing_probs.dtype
    g = grad_routing_weights.to(wide)
    top = routing_probs.gather(1, selected_experts)  # the 8 probabilities before normalisation
    total = routing_weights_sum.to(wide)
    # Through w / sum(w): dL/dw_j = g_j / s - sum_i(g_i w_i / s) / s.
    grad_top = g / total - (g * top / total).sum(dim=-1, keepdim=True) / total
    # The mask's gradient, straight through to every expert's probability, plus the top-k gather's.
    grad_probs = grad_expert_mask.permute(2, 1, 0).to(wide).sum(dim=1)
    grad_probs.scatter_add_(1, selected_experts, grad_top)
    # Through the softmax: p * (g - sum(g p)); rounded to the logits' dtype.
    grad_logits = routing_probs * (grad_probs - (grad_probs * routing_probs).sum(dim=-1, keepdim=True))
    grad_logits = grad_logits.to(dtype) + grad_router_logits
    return grad_logits @ gate_weight, grad_logits.t() @ hidden_states


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, e = p["num_tokens"], p["hidden"], p["num_experts"]
    bf16 = torch.bfloat16
    hidden_states = torch.randn(t, h, dtype=bf16, device=device)
    gate_weight = torch.randn(e, h, dtype=bf16, device=device) * 0.02
    # The saved activations of an independent router draw (the recipe's: unit-normal bf16 logits).
    router_logits = torch.randn(t, e, dtype=bf16, device=device)
    routing_probs = torch.softmax(router_logits.float(), dim=-1)
    top, selected_experts = routing_probs.topk(TOP_K, dim=-1)
    routing_weights_sum = top.sum(dim=-1, keepdim=True)
    # Upstream gradients, scaled so that each of the three paths moves the result well beyond the
    # tolerance (the load-balancing loss's gradient of the logits is the smallest).
    grad_routing_weights = torch.randn(t, TOP_K, dtype=bf16, device=device) * 0.1
    grad_expert_mask = torch.randn(e, TOP_K, t, dtype=bf16, device=device) * 0.1
    grad_router_logits = torch.randn(t, e, dtype=bf16, device=device) * 0.01
    return [
        hidden_states,
        gate_weight,
        routing_probs,
        selected_experts,
        routing_weights_sum,
        grad_routing_weights,
        grad_expert_mask,
        grad_router_logits,
    ]
