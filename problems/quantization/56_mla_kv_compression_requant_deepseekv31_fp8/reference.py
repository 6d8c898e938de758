"""DeepSeek-V3.1's MLA key/value path in FP8, as SOL-ExecBench's recipe poses it: the hidden
states (7168) are compressed by kv_a_proj_with_mqa (576 outputs, padded to 640 for 128-wide FP8
blocks: the 512-wide latent KV, the 64-wide RoPE key, 64 unused), the latent is RMS-normalised
(eps 1e-6) and requantised, and kv_b_proj expands it to 128 heads of 128 (no-RoPE key) + 128
(value). Each projection quantises its activation per 1 x 128 block and its weight per
128 x 128 block to float8_e4m3fn and multiplies the dequantised operands in
promote_types(dtype, float32); its result is rounded to the input dtype. Returns the expanded
key/value and the RoPE key."""

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


KV_LORA_RANK = 512
QK_ROPE_HEAD_DIM = 64
QK_NOPE_HEAD_DIM = 128
V_HEAD_DIM = 128
EPS = 1e-6  # DeepSeek-V3.1's rms_norm_eps: the eps every draw passes

WORKLOADS = {
    # 64 sequences x 256 tokens, hidden 7168, kv_a output 576 padded to 640, 128 heads of
    # 128 + 128 (the recipe's axes; DeepSeek-V3.1's configuration).
    "full": {
        "batch": 64,
        "seq_len": 256,
        "hidden": 7168,
        "kv_a_padded": 640,
        "heads": 128,
        "lora_rank": KV_LORA_RANK,
    },
    "small": {"batch": 2, "seq_len": 8, "hidden": 256, "kv_a_padded": 256, "heads": 2, "lora_rank": 128},
}


@torch.no_grad()
def reference(hidden_states, kv_a_proj_weight, kv_a_layernorm_weight, kv_b_proj_weight, eps):
    # hidden_states: [batch, seq_len, hidden]; kv_a_proj_weight: [kv_a_padded, hidden] (rows
    # lora_rank + 64 onwards are padding); kv_a_layernorm_weight: [lora_rank]; kv_b_proj_weight:
    # [heads * 256, lora_rank]; eps: float. Returns kv [batch, seq_len, heads, 128 + 128] (the
    # no-RoPE key, then the value) and k_pe [batch, seq_len, 1, 64] in hidden_states' dtype.
    dtype = hidden_states.dtype
    batch, seq_len, hidden = hidden_states.shape
    rank = kv_a_layernorm_weight.shape[0]
    compute = torch.promote_types(dtype, torch.float32)
    compressed = fp8_linear(hidden_states.reshape(-1, hidden), kv_a_proj_weight, None, compute)
    compressed = compressed.to(dtype)
    latent, k_pe = compressed[:, :rank], compressed[:, rank : rank + QK_ROPE_HEAD_DIM]
    h = latent.to(compute)
    h = (h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)).to(dtype)
    normed = (kv_a_layernorm_weight.to(compute) * h.to(compute)).to(dtype)  # the product in dtype
    kv = fp8_linear(normed, kv_b_proj_weight, None, compute).to(dtype)
    kv = kv.view(batch, seq_len, -1, QK_NOPE_HEAD_DIM + V_HEAD_DIM)
    return kv, k_pe.reshape(batch, seq_len, 1, QK_ROPE_HEAD_DIM)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, a, r = p["batch"], p["seq_len"], p["hidden"], p["kv_a_padded"], p["lora_rank"]
    n = p["heads"] * (QK_NOPE_HEAD_DIM + V_HEAD_DIM)
    bf16 = torch.bfloat16

    def weight(rows, cols):
        # N(0, 1/fan_in) with a gain uniform in [0.5, 2) per 128 x 128 block (the recipe's
        # per-block magnitude variation).
        gain = torch.rand(rows // BLOCK, cols // BLOCK, device=device) * 1.5 + 0.5
        gain = gain.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
        return (torch.randn(rows, cols, device=device) / math.sqrt(cols) * gain).to(bf16)

    hidden_states = torch.randn(b, s, h, dtype=bf16, device=device)
    kv_a_proj_weight = weight(a, h)
    kv_a_layernorm_weight = (torch.randn(r, device=device) * 0.1 + 1.0).to(bf16)  # near trained
    kv_b_proj_weight = weight(n, r)
    return [hidden_states, kv_a_proj_weight, kv_a_layernorm_weight, kv_b_proj_weight, EPS]
