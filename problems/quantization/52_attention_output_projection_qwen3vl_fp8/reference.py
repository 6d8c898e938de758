"""The attention output projection of a Qwen3-VL text decoder layer in FP8, as SOL-ExecBench's
recipe poses it: the attention output and the o_proj weight arrive unquantised; the reference
quantises the activation per 1 x 128 block and the weight per 128 x 128 block to float8_e4m3fn
(DeepSeek-V3-style block scaling), multiplies the dequantised operands in
promote_types(dtype, float32), adds the bias there and rounds the result to the input dtype once.
The projection is square, hidden 7680 -> 7680, over 32 sequences x 512 tokens."""

import math

import torch

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
    # 32 x 512 tokens, hidden 7680 (the recipe's axes).
    "full": {"tokens": 16384, "hidden": 7680},
    "small": {"tokens": 48, "hidden": 256},
}


@torch.no_grad()
def reference(attn_output, o_proj_weight, o_proj_bias):
    # attn_output: [tokens, hidden]; o_proj_weight: [hidden, hidden] (out, in); o_proj_bias:
    # [hidden]. Returns [tokens, hidden] in attn_output's dtype.
    compute = torch.promote_types(attn_output.dtype, torch.float32)
    return fp8_linear(attn_output, o_proj_weight, o_proj_bias, compute).to(attn_output.dtype)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h = p["tokens"], p["hidden"]
    bf16 = torch.bfloat16
    attn_output = torch.randn(t, h, dtype=bf16, device=device)
    # N(0, 1/fan_in) weights whose 128 x 128 blocks carry gains uniform in [0.5, 2), so that the
    # block scales differ (the recipe's per-block magnitude variation).
    gain = torch.rand(h // BLOCK, h // BLOCK, device=device) * 1.5 + 0.5
    gain = gain.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
    o_proj_weight = (torch.randn(h, h, device=device) / math.sqrt(h) * gain).to(bf16)
    o_proj_bias = torch.randn(h, dtype=bf16, device=device)
    return [attn_output, o_proj_weight, o_proj_bias]
