"""Group-limited top-k routing of Ring-flash-2.0 (the BailingMoeV2 router: 256 experts in 8
groups, sigmoid scores, a per-expert selection bias, 8 experts per token from the best 4 groups,
routed scaling factor 2.5). Posed as SOL-ExecBench's recipe poses it: the router projection runs
in promote_types(dtype, float32) on the bf16 hidden states and weight; each group is scored by the
sum of its two best biased scores; experts outside the 4 best groups are masked with the dtype's
lowest value; the 8 best biased scores are taken in descending order; their unbiased sigmoid
scores, normalised to sum 1 (plus 1e-20), times the scaling factor are the weights. Returns the
expert indices (int64, descending biased score) and the weights (float32).

make_inputs redraws the hidden states of any token whose decisions are within DECISION_MARGIN of
a tie (the 4th / 5th group scores, or any two consecutive scores among the 9 best biased scores
in the selected groups), at most REDRAW_LIMIT times, so that a correct kernel cannot fail on a
tie."""

import math

import torch
import torch.nn.functional as F

NUM_EXPERTS = 256
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8  # experts per token
ROUTED_SCALING_FACTOR = 2.5  # passed as a Python float
DECISION_MARGIN = 1e-4  # smallest gap a routing decision may have, in float32 score units
REDRAW_LIMIT = 16

WORKLOADS = {
    # 16,384 tokens, router input width 4096 (the recipe's token count and gating dimension).
    "full": {"num_tokens": 16384, "gating_dim": 4096},
    "small": {"num_tokens": 32, "gating_dim": 64},
}


def routing_scores(hidden_states, weight, expert_bias):
    """Sigmoid scores [tokens, 256] and the biased scores the selection ranks, in
    promote_types(dtype, float32)."""
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    scores = torch.sigmoid(F.linear(hidden_states.to(compute), weight.to(compute)))
    return scores, scores + expert_bias.to(compute)


def group_scores(biased):
    """Each group's score: the sum of its two best biased scores, [tokens, 8]."""
    grouped = biased.view(biased.shape[0], NUM_GROUPS, NUM_EXPERTS // NUM_GROUPS)
    return grouped.topk(2, dim=-1).values.sum(dim=-1)


def mask_to_best_groups(biased, groups):
    """The biased scores with every expert outside the TOPK_GROUPS best groups set to the dtype's
    lowest value."""
    best = groups.topk(TOPK_GROUPS, dim=-1, sorted=False).indices
    keep = torch.zeros_like(groups, dtype=torch.bool).scatter_(1, best, True)
    keep = keep.repeat_interleave(NUM_EXPERTS // NUM_GROUPS, dim=1)
    return biased.masked_fill(~keep, torch.finfo(biased.dtype).min)


@torch.no_grad()
def reference(hidden_states, weight, expert_bias, routed_scaling_factor):
    # hidden_states: [tokens, gating_dim] bf16; weight: [256, gating_dim] bf16; expert_bias: [256]
    # bf16; routed_scaling_factor: float.
    scores, biased = routing_scores(hidden_states, weight, expert_bias)
    masked = mask_to_best_groups(biased, group_scores(biased))
    topk_indices = masked.topk(TOP_K, dim=-1, sorted=True).indices
    topk_weights = scores.gather(1, topk_indices)
    topk_weights = topk_weights / (topk_weights.sum(dim=-1, keepdim=True) + 1e-20)
    return topk_indices, topk_weights * routed_scaling_factor


def unstable_rows(hidden_states, weight, expert_bias):
    """Tokens with a decision closer than DECISION_MARGIN to a tie: the gap between the 4th and
    5th group scores, or between consecutive scores among the 9 best in the selected groups (the
    indices are returned in order, so every place among the 8 is a decision)."""
    _, biased = routing_scores(hidden_states, weight, expert_bias)
    groups = group_scores(biased)
    ranked_groups = groups.sort(dim=-1, descending=True).values
    group_gap = ranked_groups[:, TOPK_GROUPS - 1] - ranked_groups[:, TOPK_GROUPS]
    ranked = mask_to_best_groups(biased, groups).sort(dim=-1, descending=True).values
    expert_gaps = ranked[:, :TOP_K] - ranked[:, 1 : TOP_K + 1]
    return (group_gap < DECISION_MARGIN) | (expert_gaps.min(dim=-1).values < DECISION_MARGIN)


def draw_hidden_states(num_tokens, gating_dim, device):
    return torch.randn(num_tokens, gating_dim, dtype=torch.bfloat16, device=device)


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
    t, d = p["num_tokens"], p["gating_dim"]
    # The recipe's distributions, drawn directly in bf16: unit-normal hidden states, the router
    # weight N(0, 1/d), a unit-normal expert bias (it outweighs the sigmoid scores' spread).
    hidden_states = draw_hidden_states(t, d, device)
    weight = torch.randn(NUM_EXPERTS, d, dtype=torch.bfloat16, device=device) / math.sqrt(d)
    expert_bias = torch.randn(NUM_EXPERTS, dtype=torch.bfloat16, device=device)
    redraw_ties(
        hidden_states,
        lambda rows: unstable_rows(rows, weight, expert_bias),
        lambda n: draw_hidden_states(n, d, device),
    )
    return [hidden_states, weight, expert_bias, ROUTED_SCALING_FACTOR]
