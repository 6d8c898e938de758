"""Capacity-limited expert dispatch for the MoE block of Qwen3-Coder-480B-A35B (hidden 6144, 160
experts of width 2560, 8 per token): every (token, choice) assignment is queued at its expert in
token order (token 0's 8 choices, then token 1's, ...); an expert keeps the first
`capacity = ceil(CAPACITY_FACTOR * tokens * 8 / 160)` assignments and drops the rest. The kept
tokens are gathered into one [capacity, hidden] buffer per expert (unused slots zero), the batched
SwiGLU experts (down(silu(x @ gate) * (x @ up)), weights stored [in, out]) run on the buffers in
bf16 with float32 accumulation, and each token's output is the sum, over its kept assignments, of
the routing weight times the expert's output row, accumulated in float32 and rounded to bf16 once.
A token whose assignments were all dropped gets zeros.

Expert choices are drawn popularity-skewed (a per-expert popularity plus Gumbel noise), so that
the popular experts overflow and the capacity cutoff is part of every draw."""

import math

import torch
import torch.nn.functional as F

CAPACITY_FACTOR = 1.25  # slots per expert over the balanced share tokens * 8 / experts
POPULARITY_STD = 0.5  # spread of the experts' popularity (log-odds of being chosen)

WORKLOADS = {
    # 8,192 tokens, hidden 6144, 160 experts of width 2560 (15.1 GB of bf16 expert weights).
    "full": {"num_tokens": 8192, "hidden": 6144, "intermediate": 2560, "num_experts": 160, "top_k": 8},
    "small": {"num_tokens": 64, "hidden": 64, "intermediate": 32, "num_experts": 16, "top_k": 8},
}


def capacity_of(num_tokens, top_k, num_experts):
    """Slots per expert."""
    return math.ceil(CAPACITY_FACTOR * num_tokens * top_k / num_experts)


def queue_positions(selected_experts, num_experts):
    """Each assignment's place in its expert's queue, [tokens, top_k]: the number of earlier
    assignments (in token-major order) to the same expert."""
    flat = selected_experts.reshape(-1)
    one_hot = F.one_hot(flat, num_experts)
    return (one_hot.cumsum(dim=0) - one_hot).gather(1, flat[:, None]).view(selected_experts.shape)


@torch.no_grad()
def reference(
    hidden_states,
    selected_experts,
    routing_weights,
    expert_gate_weights,
    expert_up_weights,
    expert_down_weights,
):
    # hidden_states: [T, H] bf16; selected_experts: [T, K] int64 (distinct per token);
    # routing_weights: [T, K] bf16; expert_gate/up_weights: [E, H, I], expert_down_weights:
    # [E, I, H] (bf16, [in, out]).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    num_tokens, hidden = hidden_states.shape
    num_experts = expert_gate_weights.shape[0]
    top_k = selected_experts.shape[1]
    capacity = capacity_of(num_tokens, top_k, num_experts)
    position = queue_positions(selected_experts, num_experts)
    token, slot = torch.where(position < capacity)  # the kept assignments
    expert, place = selected_experts[token, slot], position[token, slot]
    buffers = hidden_states.new_zeros(num_experts, capacity, hidden)
    buffers[expert, place] = hidden_states[token]
    gate = torch.bmm(buffers, expert_gate_weights)
    up = torch.bmm(buffers, expert_up_weights)
    del buffers
    act = F.silu(gate) * up
    del gate, up
    expert_output = torch.bmm(act, expert_down_weights)
    del act
    output = torch.zeros(num_tokens, hidden, dtype=compute, device=hidden_states.device)
    for e in range(num_experts):  # one expert at a time keeps the combine's temporaries small
        kept = expert == e
        rows = expert_output[e, place[kept]].to(compute)
        output.index_add_(0, token[kept], rows * routing_weights[token[kept], slot[kept], None].to(compute))
    return output.to(hidden_states.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i, e, k = p["num_tokens"], p["hidden"], p["intermediate"], p["num_experts"], p["top_k"]
    hidden_states = torch.randn(t, h, dtype=torch.bfloat16, device=device)
    # Each token's k distinct choices: the k largest of popularity + Gumbel noise, so that popular
    # experts receive more than their balanced share.
    popularity = torch.randn(e, device=device) * POPULARITY_STD
    gumbel = -torch.log(-torch.log(torch.rand(t, e, device=device)))
    selected_experts = (popularity + gumbel).argsort(dim=-1, descending=True)[:, :k]
    routing_weights = torch.softmax(torch.randn(t, k, device=device), dim=-1).to(torch.bfloat16)

    def weight(*shape):
        # N(0, 1/fan_in) with fan_in the middle ([in, out]) dimension, drawn in bf16.
        return torch.randn(*shape, dtype=torch.bfloat16, device=device) / math.sqrt(shape[1])

    return [
        hidden_states,
        selected_experts,
        routing_weights,
        weight(e, h, i),
        weight(e, h, i),
        weight(e, i, h),
    ]
