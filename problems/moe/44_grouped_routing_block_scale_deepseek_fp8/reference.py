"""DeepSeek-V3 MoE on one expert-parallel rank with FP8 block-scaled weights and activations, as
FlashInfer's trtllm_fp8_block_scale_moe runs it: DeepSeek's grouped routing over all 256 experts
(sigmoid scores plus a selection bias; 8 groups of 32, each scored by its two best biased scores;
the best 4 groups; the best 8 experts among them; weights from the unbiased scores, normalised and
times the routed scaling factor 2.5), then the 32 experts local to this rank (global ids
local_expert_offset .. local_expert_offset + 31) run a SwiGLU MLP on their tokens, and their
weighted outputs are summed per token. Experts on other ranks contribute nothing here.

The FP8 format is the published one: e4m3 values with one float32 scale per 128 values of the
hidden states (hidden_states_scale is [hidden / 128, tokens]) and per 128 x 128 block of each
weight. The reference dequantises (value * scale) in promote_types(float32, routing_logits.dtype),
runs the GEMMs there, and rounds the output to bf16 once. The first GEMM's output is [up | gate]:
its first `intermediate` columns are the up projection, the rest the gate.

The batch is the captured FlashInfer-Trace workload's (14,107 tokens, the captured routing bias);
routing logits are drawn per draw on the bf16 grid from the captured moments, and make_inputs
redraws the logits of any token whose group or expert choice is within DECISION_MARGIN of a tie,
at most REDRAW_LIMIT times, so that a correct kernel cannot fail on a tie."""

import torch
import torch.nn.functional as F

NUM_EXPERTS = 256  # global experts the router scores
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8
BLOCK = 128  # FP8 scale block: 128 values of a row, 128 x 128 values of a weight
LOCAL_EXPERT_OFFSET = 32  # this rank's first global expert; passed as a Python int
ROUTED_SCALING_FACTOR = 2.5  # passed as a Python float

# The captured workload (FlashInfer-Trace moe_fp8_block_scale_ds_routing_topk8_ng8_kg4_e32_h7168_i2048,
# record 5e8dc11c-f2a9-42d5-8dce-9419cbf34d5d): the routing logits' moments and the routing bias,
# 4.9375 for every expert but these, which have 4.96875.
LOGITS_MEAN, LOGITS_STD = -1.6706, 0.6560
BIAS_BASE, BIAS_HIGH = 4.9375, 4.96875
BIAS_HIGH_EXPERTS = (
    3,
    6,
    7,
    9,
    10,
    11,
    16,
    17,
    18,
    23,
    30,
    31,
    36,
    37,
    41,
    42,
    43,
    44,
    46,
    47,
    48,
    49,
    54,
    55,
    56,
    58,
    61,
    62,
    63,
    66,
    67,
    68,
    69,
    72,
    74,
    75,
    79,
    80,
    81,
    82,
    83,
    84,
    87,
    90,
    92,
    96,
    100,
    101,
    102,
    104,
    105,
    108,
    109,
    110,
    112,
    114,
    119,
    120,
    123,
    125,
    126,
    127,
    131,
    136,
    147,
    151,
    152,
    153,
    154,
    157,
    159,
    167,
    170,
    171,
    174,
    183,
    185,
    195,
    196,
    197,
    200,
    203,
    214,
    216,
    217,
    219,
    222,
    223,
    226,
    230,
    231,
    234,
    235,
    236,
    237,
    238,
    240,
    241,
    242,
    243,
    253,
)
DECISION_MARGIN = 1e-4  # smallest gap a routing decision may have, in float32 score units
REDRAW_LIMIT = 16

WORKLOADS = {
    # The captured batch: 14,107 tokens, hidden 7168, expert intermediate 2048, 32 local experts.
    "full": {"num_tokens": 14107, "hidden": 7168, "intermediate": 2048, "num_local_experts": 32},
    "small": {"num_tokens": 24, "hidden": 256, "intermediate": 128, "num_local_experts": 32},
}


def route(routing_logits, routing_bias, routed_scaling_factor):
    """DeepSeek-V3's grouped routing in the logits' compute dtype: the selected global experts
    [tokens, 8] (in no particular order) and the dense routing weights [tokens, 256] (zero for
    experts not selected)."""
    compute = torch.promote_types(routing_logits.dtype, torch.float32)
    scores = torch.sigmoid(routing_logits.to(compute))
    biased = scores + routing_bias.to(compute)
    selected = mask_to_best_groups(biased, group_scores(biased)).topk(TOP_K, dim=1, sorted=False).indices
    weights = torch.zeros_like(scores).scatter_(1, selected, scores.gather(1, selected))
    weights = weights / (weights.sum(dim=1, keepdim=True) + 1e-20) * routed_scaling_factor
    return selected, weights


def group_scores(biased):
    """Each group's score: the sum of its two best biased scores, [tokens, 8]."""
    grouped = biased.view(biased.shape[0], NUM_GROUPS, NUM_EXPERTS // NUM_GROUPS)
    return grouped.topk(2, dim=2, sorted=False).values.sum(dim=2)


def mask_to_best_groups(biased, groups):
    """The biased scores with every expert outside the TOPK_GROUPS best groups set to float32's
    lowest value."""
    best = groups.topk(TOPK_GROUPS, dim=1, sorted=False).indices
    keep = torch.zeros_like(groups, dtype=torch.bool).scatter_(1, best, True)
    keep = keep.repeat_interleave(NUM_EXPERTS // NUM_GROUPS, dim=1)
    return biased.masked_fill(~keep, torch.finfo(torch.float32).min)


def dequantize_blocks(values, scales, dtype):
    """A [rows, cols] e4m3 weight with one scale per 128 x 128 block ([rows / 128, cols / 128]),
    as `dtype`."""
    rows, cols = values.shape
    blocks = values.to(dtype).view(rows // BLOCK, BLOCK, cols // BLOCK, BLOCK)
    return (blocks * scales.to(dtype)[:, None, :, None]).view(rows, cols)


@torch.no_grad()
def reference(
    routing_logits,
    routing_bias,
    hidden_states,
    hidden_states_scale,
    gemm1_weights,
    gemm1_weights_scale,
    gemm2_weights,
    gemm2_weights_scale,
    local_expert_offset,
    routed_scaling_factor,
):
    # routing_logits: [T, 256] float32; routing_bias: [256] bf16; hidden_states: [T, H] e4m3;
    # hidden_states_scale: [H / 128, T] float32; gemm1_weights: [32, 2I, H] e4m3 with scales
    # [32, 2I / 128, H / 128]; gemm2_weights: [32, H, I] e4m3 with scales [32, H / 128, I / 128];
    # local_expert_offset: int; routed_scaling_factor: float.
    compute = torch.promote_types(routing_logits.dtype, torch.float32)
    tokens, hidden = hidden_states.shape
    intermediate = gemm2_weights.shape[2]
    selected, weights = route(routing_logits, routing_bias, routed_scaling_factor)
    scale = hidden_states_scale.to(compute).t()[:, :, None]  # [T, H / 128, 1]
    activation = (hidden_states.to(compute).view(tokens, hidden // BLOCK, BLOCK) * scale).view(tokens, hidden)
    output = torch.zeros(tokens, hidden, dtype=compute, device=hidden_states.device)
    for local in range(gemm1_weights.shape[0]):
        expert = local_expert_offset + local
        rows = (selected == expert).any(dim=1).nonzero().squeeze(1)
        if rows.numel() == 0:
            continue
        w13 = dequantize_blocks(gemm1_weights[local], gemm1_weights_scale[local], compute)
        projected = activation[rows] @ w13.t()
        del w13
        up, gate = projected[:, :intermediate], projected[:, intermediate:]
        w2 = dequantize_blocks(gemm2_weights[local], gemm2_weights_scale[local], compute)
        expert_output = (F.silu(gate) * up) @ w2.t()
        del w2, projected
        output.index_add_(0, rows, expert_output * weights[rows, expert, None])
    return output.to(routing_bias.dtype)


def unstable_rows(routing_logits, routing_bias):
    """Tokens whose group choice (4th vs 5th group score) or expert choice (8th vs 9th biased score
    in the selected groups) is closer than DECISION_MARGIN to a tie, in float32."""
    biased = torch.sigmoid(routing_logits.float()) + routing_bias.float()
    groups = group_scores(biased)
    ranked_groups = groups.sort(dim=1, descending=True).values
    group_gap = ranked_groups[:, TOPK_GROUPS - 1] - ranked_groups[:, TOPK_GROUPS]
    ranked = mask_to_best_groups(biased, groups).sort(dim=1, descending=True).values
    expert_gap = ranked[:, TOP_K - 1] - ranked[:, TOP_K]
    return (group_gap < DECISION_MARGIN) | (expert_gap < DECISION_MARGIN)


def draw_logits(num_tokens, device):
    """Logits from the captured moments, on the bf16 grid the model's gate emits, held as float32."""
    logits = torch.randn(num_tokens, NUM_EXPERTS, device=device) * LOGITS_STD + LOGITS_MEAN
    return logits.to(torch.bfloat16).to(torch.float32)


def random_e4m3(shape, device):
    """Unit-normal values rounded to e4m3, drawn one leading slice at a time so that the float32
    draw never takes more than one expert's worth of memory."""
    out = torch.empty(shape, dtype=torch.float8_e4m3fn, device=device)
    for part in out.view(-1, *shape[-2:]):
        part.copy_(torch.randn(part.shape, device=device))
    return out


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
    t, h, i, e = p["num_tokens"], p["hidden"], p["intermediate"], p["num_local_experts"]
    routing_bias = torch.full((NUM_EXPERTS,), BIAS_BASE, dtype=torch.bfloat16)
    routing_bias[list(BIAS_HIGH_EXPERTS)] = BIAS_HIGH
    routing_bias = routing_bias.to(device)
    routing_logits = draw_logits(t, device)
    redraw_ties(
        routing_logits, lambda rows: unstable_rows(rows, routing_bias), lambda n: draw_logits(n, device)
    )
    # The published distributions: unit-normal e4m3 values, scales uniform in [0, 1).
    hidden_states = random_e4m3((1, t, h), device)[0]
    hidden_states_scale = torch.rand(h // BLOCK, t, device=device)
    gemm1_weights = random_e4m3((e, 2 * i, h), device)
    gemm1_weights_scale = torch.rand(e, 2 * i // BLOCK, h // BLOCK, device=device)
    gemm2_weights = random_e4m3((e, h, i), device)
    gemm2_weights_scale = torch.rand(e, h // BLOCK, i // BLOCK, device=device)
    return [
        routing_logits,
        routing_bias,
        hidden_states,
        hidden_states_scale,
        gemm1_weights,
        gemm1_weights_scale,
        gemm2_weights,
        gemm2_weights_scale,
        LOCAL_EXPERT_OFFSET,
        ROUTED_SCALING_FACTOR,
    ]
