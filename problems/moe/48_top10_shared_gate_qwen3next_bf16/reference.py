"""The MoE block of Qwen3-Next-80B-A3B (hidden 2048, 512 routed experts of width 512, 10 per token,
one shared expert of width 512 behind a learned sigmoid gate), as Hugging Face's
Qwen3NextSparseMoeBlock computes it, with the router posed as SOL-ExecBench's recipe poses it: the
router projection runs in promote_types(dtype, float32); softmax probabilities choose the 10
experts; their probabilities, normalised to sum 1 and rounded to bf16, are the weights. Each
expert is a SwiGLU MLP (down(silu(gate(x)) * up(x)), no biases) in bf16 with float32
accumulation; the weighted outputs are accumulated into a bf16 output in expert order; the shared
expert's output, times sigmoid(x . shared_expert_gate), is added. Returns the output and the
router logits rounded to bf16.

make_inputs redraws the hidden states of any token whose 10th and 11th probabilities are within
DECISION_MARGIN, at most REDRAW_LIMIT times, so that a correct kernel cannot fail on a tie."""

import math

import torch
import torch.nn.functional as F

NUM_EXPERTS = 512
TOP_K = 10
DECISION_MARGIN = 1e-5  # smallest gap between the 10th and 11th probabilities, in float32
REDRAW_LIMIT = 16

WORKLOADS = {
    # 64 x 613 tokens (39,232), hidden 2048, experts and the shared expert 512 wide.
    "full": {"batch": 64, "seq_len": 613, "hidden": 2048, "intermediate": 512, "shared_intermediate": 512},
    "small": {"batch": 2, "seq_len": 8, "hidden": 64, "intermediate": 32, "shared_intermediate": 32},
}


def swiglu(x, w_gate, w_up, w_down):
    """down(silu(gate(x)) * up(x)); weights [out, in]; every product rounded to x's dtype."""
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def router(hidden_flat, router_weight):
    """Router logits and softmax probabilities [tokens, 512] in promote_types(dtype, float32)."""
    compute = torch.promote_types(hidden_flat.dtype, torch.float32)
    logits = F.linear(hidden_flat.to(compute), router_weight.to(compute))
    return logits, torch.softmax(logits, dim=-1)


@torch.no_grad()
def reference(
    hidden_states,
    router_weight,
    gate_proj_weights,
    up_proj_weights,
    down_proj_weights,
    shared_gate_proj_weight,
    shared_up_proj_weight,
    shared_down_proj_weight,
    shared_expert_gate_weight,
):
    # hidden_states: [B, S, H]; router_weight: [512, H]; gate/up_proj_weights: [512, I, H];
    # down_proj_weights: [512, H, I]; shared gate/up: [SI, H]; shared down: [H, SI];
    # shared_expert_gate_weight: [1, H] (all bf16, [out, in]).
    batch, seq_len, hidden = hidden_states.shape
    dtype = hidden_states.dtype
    x = hidden_states.reshape(-1, hidden)
    logits, probs = router(x, router_weight)
    weights, selected = probs.topk(TOP_K, dim=-1)
    weights = (weights / weights.sum(dim=-1, keepdim=True)).to(dtype)
    output = torch.zeros_like(x)
    for expert in selected.unique().tolist():
        rows, slot = torch.where(selected == expert)
        y = swiglu(x[rows], gate_proj_weights[expert], up_proj_weights[expert], down_proj_weights[expert])
        output.index_add_(0, rows, y * weights[rows, slot, None])
    shared = swiglu(x, shared_gate_proj_weight, shared_up_proj_weight, shared_down_proj_weight)
    shared = torch.sigmoid(F.linear(x, shared_expert_gate_weight)) * shared
    return (output + shared).view(batch, seq_len, hidden), logits.to(dtype)


def unstable_rows(hidden_flat, router_weight):
    """Tokens whose 10th and 11th probabilities are closer than DECISION_MARGIN."""
    _, probs = router(hidden_flat, router_weight)
    ranked = probs.sort(dim=-1, descending=True).values
    return ranked[:, TOP_K - 1] - ranked[:, TOP_K] < DECISION_MARGIN


def draw_hidden_states(shape, device):
    return torch.randn(shape, dtype=torch.bfloat16, device=device)


def redraw_ties(rows, is_unstable, draw_rows):
    """Redraws, in place, the rows (tokens) of `rows` that `is_unstable` flags, until none is
    flagged; at most REDRAW_LIMIT rounds, then a ValueError. A meta tensor (shapes only) has no
    values to condition and is left as it is."""
    if rows.device.type == "meta":
        return
    for _ in range(REDRAW_LIMIT):
        unstable = is_unstable(rows)
        if not bool(unstable.any()):
            return
        rows[unstable] = draw_rows(int(unstable.sum()))
    raise ValueError(f"routing margins under {DECISION_MARGIN} persist after {REDRAW_LIMIT} redraws")


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h = p["batch"], p["seq_len"], p["hidden"]
    i, si = p["intermediate"], p["shared_intermediate"]

    def weight(*shape):
        # N(0, 1/fan_in), drawn directly in bf16 as the published problem draws it.
        return torch.randn(*shape, dtype=torch.bfloat16, device=device) / math.sqrt(shape[-1])

    hidden_states = draw_hidden_states((b, s, h), device)
    router_weight = weight(NUM_EXPERTS, h)
    experts = [
        weight(NUM_EXPERTS, i, h),
        weight(NUM_EXPERTS, i, h),
        weight(NUM_EXPERTS, h, i),
        weight(si, h),
        weight(si, h),
        weight(h, si),
        weight(1, h),
    ]
    redraw_ties(
        hidden_states.view(-1, h),
        lambda rows: unstable_rows(rows, router_weight),
        lambda n: draw_hidden_states((n, h), device),
    )
    return [hidden_states, router_weight, *experts]
