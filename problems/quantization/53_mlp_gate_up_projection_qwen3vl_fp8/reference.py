"""The gate and up projections of a Qwen3-VL MLP (hidden 3584, intermediate 18944) on
pre-quantised FP8 operands, with the SiLU gating, as SOL-ExecBench's recipe poses it: the
activation arrives as float8_e4m3fn codes with one float32 scale per 1 x 128 block, each weight
as codes with one float32 scale per 128 x 128 block. The reference dequantises them in
promote_types(scale dtype, float32), computes gate = x @ W_gate^T and up = x @ W_up^T there, then
SiLU(gate) * up, and rounds to bfloat16 once."""

import math

import torch
import torch.nn.functional as F

# FP8 block scaling as the recipe's reference writes it (DeepSeek-V3 style): an activation is
# scaled per 1 x 128 block along K, a weight per 128 x 128 block; each block's scale is its
# largest magnitude over E4M3_MAX (kept at or above SCALE_FLOOR), the values are divided by it,
# clamped to the e4m3 range and rounded to float8_e4m3fn; a scale tensor holds one value per
# block, [rows / block_rows, cols / 128]. Dequantisation multiplies each code by its block's scale.
E4M3_MAX = 448.0  # the largest finite float8_e4m3fn
BLOCK = 128  # block width along K (and height of a weight block)
SCALE_FLOOR = 1e-12  # an all-zero block gets this scale instead of 0


def fp8_quantize(x, block_rows):
    """x [rows, cols] in the compute dtype -> (codes float8_e4m3fn [rows, cols], scales
    [rows // block_rows, cols // 128] in x's dtype)."""
    rows, cols = x.shape
    blocks = x.reshape(rows // block_rows, block_rows, cols // BLOCK, BLOCK)
    scale = torch.clamp(blocks.abs().amax(dim=(1, 3)) / E4M3_MAX, min=SCALE_FLOOR)
    codes = (blocks / scale[:, None, :, None]).clamp(-E4M3_MAX, E4M3_MAX)
    return codes.to(torch.float8_e4m3fn).reshape(rows, cols), scale


def fp8_dequantize(codes, scale, block_rows, compute):
    """codes float8_e4m3fn [rows, cols], scale [rows // block_rows, cols // 128] -> the values in
    `compute`."""
    rows, cols = codes.shape
    blocks = codes.to(compute).reshape(rows // block_rows, block_rows, cols // BLOCK, BLOCK)
    return (blocks * scale.to(compute)[:, None, :, None]).reshape(rows, cols)


def fp8_linear(x, weight, bias, compute):
    """The recipe's FP8 linear layer on unquantised operands: x [tokens, K] quantised per 1 x 128
    block, weight [N, K] per 128 x 128 block, both dequantised and multiplied in `compute`, plus
    the bias (or none). Returns [tokens, N] in `compute`."""
    qx, sx = fp8_quantize(x.to(compute), 1)
    qw, sw = fp8_quantize(weight.to(compute), BLOCK)
    y = fp8_dequantize(qx, sx, 1, compute) @ fp8_dequantize(qw, sw, BLOCK, compute).T
    return y if bias is None else y + bias.to(compute)


WORKLOADS = {
    # 8,704 tokens (the recipe's token count), hidden 3584, intermediate 18944.
    "full": {"tokens": 8704, "hidden": 3584, "intermediate": 18944},
    "small": {"tokens": 40, "hidden": 256, "intermediate": 384},
}


@torch.no_grad()
def reference(x, scale_x, gate_proj_weight, scale_gate, up_proj_weight, scale_up):
    # x: [tokens, hidden] e4m3 codes, scale_x: [tokens, hidden / 128]; gate_proj_weight,
    # up_proj_weight: [intermediate, hidden] e4m3 codes, scale_gate, scale_up:
    # [intermediate / 128, hidden / 128]. Returns [tokens, intermediate] bfloat16.
    compute = torch.promote_types(scale_x.dtype, torch.float32)
    a = fp8_dequantize(x, scale_x, 1, compute)
    gate = a @ fp8_dequantize(gate_proj_weight, scale_gate, BLOCK, compute).T
    up = a @ fp8_dequantize(up_proj_weight, scale_up, BLOCK, compute).T
    del a
    return (F.silu(gate) * up).to(torch.bfloat16)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, i = p["tokens"], p["hidden"], p["intermediate"]

    def weight():
        # N(0, 1/hidden) with a gain uniform in [0.5, 2) per 128 x 128 block (the recipe's
        # per-block magnitude variation), in float32 before quantisation.
        gain = torch.rand(i // BLOCK, h // BLOCK, device=device) * 1.5 + 0.5
        gain = gain.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
        return torch.randn(i, h, device=device) / math.sqrt(h) * gain

    x, scale_x = fp8_quantize(torch.randn(t, h, device=device), 1)
    gate, scale_gate = fp8_quantize(weight(), BLOCK)
    up, scale_up = fp8_quantize(weight(), BLOCK)
    return [x, scale_x, gate, scale_gate, up, scale_up]
