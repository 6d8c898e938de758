"""The MoE block of ERNIE-4.5-300B-A47B (hidden 8192, 64 routed experts of width 3584, 8 per
token, a shared expert of width 7168), as Hugging Face's Ernie4_5_MoeSparseMoeBlock computes it:
the router runs in float32 (the gate's weight and the correction bias are float32 parameters);
softmax probabilities plus the correction bias choose the 8 experts; the chosen experts' unbiased
probabilities, normalised by their sum (at least norm_min), are the weights, rounded to bf16. Each
routed expert and the shared expert is a SwiGLU MLP (down(silu(gate(x)) * up(x)), no biases)
computed in bf16 with float32 accumulation; the weighted expert outputs are accumulated into a
bf16 output in expert order, and the shared expert's output is added. Returns the output and the
router logits (float32, [tokens, 64]), as the block does.

make_inputs redraws the hidden states of any token whose 8th and 9th biased scores are within
DECISION_MARGIN of a tie, at most REDRAW_LIMIT times, so that a correct kernel cannot fail on a
tie."""

import math

import torch
import torch.nn.functional as F

NUM_EXPERTS = 64
TOP_K = 8
NORM_MIN = 1e-10  # the published draw's norm_min, passed as a Python float
DECISION_MARGIN = 1e-4  # smallest gap between the 8th and 9th biased scores, in float32
REDRAW_LIMIT = 16

WORKLOADS = {
    # 64 x 128 tokens, hidden 8192, routed experts 3584 wide, the shared expert 7168 wide.
    "full": {"batch": 64, "seq_len": 128, "hidden": 8192, "intermediate": 3584, "shared_intermediate": 7168},
    "small": {"batch": 2, "seq_len": 8, "hidden": 64, "intermediate": 32, "shared_intermediate": 64},
}


def swiglu(x, w_gate, w_up, w_down):
    """down(silu(gate(x)) * up(x)); weights [out, in]; every product rounded to x's dtype."""
    return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def router(hidden_flat, gate_weight, e_score_correction_bias):
    """Router logits [tokens, 64], probabilities and biased scores, in the gate's float32
    (float64 in the anchor)."""
    wide = torch.promote_types(gate_weight.dtype, torch.float32)
    logits = F.linear(hidden_flat.to(wide), gate_weight.to(wide))
    probs = torch.softmax(logits, dim=-1)
    return logits, probs, probs + e_score_correction_bias.to(wide)


@torch.no_grad()
def reference(
    hidden_states,
    gate_weight,
    e_score_correction_bias,
    gate_proj_weights,
    up_proj_weights,
    down_proj_weights,
    shared_gate_proj_weight,
    shared_up_proj_weight,
    shared_down_proj_weight,
    norm_min,
):
    # hidden_states: [B, S, H] bf16; gate_weight: [64, H] float32; e_score_correction_bias: [1, 64]
    # float32; gate/up_proj_weights: [64, I, H], down_proj_weights: [64, H, I]; shared gate/up:
    # [SI, H], shared down: [H, SI] (bf16, [out, in]); norm_min: float.
    batch, seq_len, hidden = hidden_states.shape
    x = hidden_states.reshape(-1, hidden)
    shared = swiglu(x, shared_gate_proj_weight, shared_up_proj_weight, shared_down_proj_weight)
    logits, probs, biased = router(x, gate_weight, e_score_correction_bias)
    selected = biased.topk(TOP_K, dim=-1).indices
    weights = probs.gather(1, selected)
    weights = (weights / weights.sum(dim=-1, keepdim=True).clamp(min=norm_min)).to(hidden_states.dtype)
    output = torch.zeros_like(x)
    for expert in selected.unique().tolist():
        rows, slot = torch.where(selected == expert)
        y = swiglu(x[rows], gate_proj_weights[expert], up_proj_weights[expert], down_proj_weights[expert])
        output.index_add_(0, rows, y * weights[rows, slot, None])
    return (output + shared).view(batch, seq_len, hidden), logits


def unstable_rows(hidden_flat, gate_weight, e_score_correction_bias):
    """Tokens whose 8th and 9th biased scores are closer than DECISION_MARGIN."""
    _, _, biased = router(hidden_flat, gate_weight, e_score_correction_bias)
    ranked = biased.sort(dim=-1, descending=True).values
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
    gate_weight = torch.randn(NUM_EXPERTS, h, device=device) / math.sqrt(h)
    # The correction bias at the scale of the softmax probabilities (about 1/64), so that the
    # scores still steer the selection.
    e_score_correction_bias = torch.randn(1, NUM_EXPERTS, device=device) * 0.02
    experts = [
        weight(NUM_EXPERTS, i, h),
        weight(NUM_EXPERTS, i, h),
        weight(NUM_EXPERTS, h, i),
        weight(si, h),
        weight(si, h),
        weight(h, si),
    ]
    redraw_ties(
        hidden_states.view(-1, h),
        lambda rows: unstable_rows(rows, gate_weight, e_score_correction_bias),
        lambda n: draw_hidden_states((n, h), device),
    )
    return [hidden_states, gate_weight, e_score_correction_bias, *experts, NORM_MIN]
