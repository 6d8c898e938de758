"""The routed experts of GPT-OSS-120B's MoE layer (hidden 2880, 128 experts of width 2880, 4 per
token), as Hugging Face's GptOssExperts computes them: each token's hidden state goes to its 4
chosen experts; an expert's fused gate/up projection (weights [in, 2 x width] plus a bias) is
split into interleaved columns (gate = even columns, up = odd ones), the gate clamped from above
and up on both sides at GLU_LIMIT, then (up + 1) * gate * sigmoid(GLU_ALPHA * gate) goes through
the down projection (weights [width, in] plus a bias); each output is weighted by the token's
routing weight for that expert and summed per token. All float32 (float64 in the anchor)."""

import torch

GLU_ALPHA = 1.702  # the clamped SwiGLU's sigmoid scale (GPT-OSS)
GLU_LIMIT = 7.0  # swiglu_limit of GPT-OSS's config

WORKLOADS = {
    # 16,384 tokens, hidden 2880, 128 experts of width 2880, 4 per token (12.7 GB of weights).
    "full": {"num_tokens": 16384, "hidden": 2880, "intermediate": 2880, "num_experts": 128, "top_k": 4},
    "small": {"num_tokens": 32, "hidden": 64, "intermediate": 64, "num_experts": 16, "top_k": 4},
}


@torch.no_grad()
def reference(
    hidden_states,
    router_indices,
    routing_weights,
    gate_up_projection,
    gate_up_projection_bias,
    down_projection,
    down_projection_bias,
):
    # hidden_states: [T, H]; router_indices: [T, K] int64 (distinct per token); routing_weights:
    # [T, E] (dense; the chosen experts' entries are used); gate_up_projection: [E, H, 2I]
    # (columns gate0, up0, gate1, up1, ...); gate_up_projection_bias: [E, 2I]; down_projection:
    # [E, I, H]; down_projection_bias: [E, H].
    output = torch.zeros_like(hidden_states)
    for expert in router_indices.unique().tolist():
        rows, _ = torch.where(router_indices == expert)
        gate_up = hidden_states[rows] @ gate_up_projection[expert] + gate_up_projection_bias[expert]
        gate = gate_up[:, ::2].clamp(max=GLU_LIMIT)
        up = gate_up[:, 1::2].clamp(min=-GLU_LIMIT, max=GLU_LIMIT)
        gated = (up + 1) * (gate * torch.sigmoid(gate * GLU_ALPHA))
        expert_output = gated @ down_projection[expert] + down_projection_bias[expert]
        output.index_add_(0, rows, expert_output * routing_weights[rows, expert, None])
    return output


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i, e, k = p["num_tokens"], p["hidden"], p["intermediate"], p["num_experts"], p["top_k"]
    hidden_states = torch.randn(t, h, device=device)
    # Routing from drawn logits: the top-k experts, and the softmax over all experts as the
    # (dense) routing weights.
    router_logits = torch.randn(t, e, device=device)
    router_indices = router_logits.topk(k, dim=-1).indices
    routing_weights = torch.softmax(router_logits, dim=-1)
    # The recipe's scales: the gate/up projection widened to 0.03 with non-zero biases (0.5).
    gate_up_projection = torch.randn(e, h, 2 * i, device=device) * 0.03
    gate_up_projection_bias = torch.randn(e, 2 * i, device=device) * 0.5
    down_projection = torch.randn(e, i, h, device=device) * 0.02
    down_projection_bias = torch.randn(e, h, device=device) * 0.02
    return [
        hidden_states,
        router_indices,
        routing_weights,
        gate_up_projection,
        gate_up_projection_bias,
        down_projection,
        down_projection_bias,
    ]
