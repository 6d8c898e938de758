"""The QKV projections of a Qwen3-VL text attention layer in FP8 with the per-head QK RMSNorm, as
SOL-ExecBench's recipe poses it: hidden 7680, 60 query heads and 8 key/value heads of 128. Each
projection quantises its activation per 1 x 128 block and its weight per 128 x 128 block to
float8_e4m3fn, multiplies the dequantised operands in promote_types(dtype, float32), adds its
bias and rounds to the input dtype; q and k are RMS-normalised over each head's 128 values
(statistics in float32, eps 1e-5, the normalised values rounded to the dtype before the weight
multiplies them, as the Qwen3 RMSNorm does); q, k and v are returned heads-first."""

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


HEAD_DIM = 128
EPS = 1e-5  # the eps every draw passes (the recipe's value)

WORKLOADS = {
    # 64 sequences x 256 tokens, hidden 7680, 60 query heads, 8 key/value heads (the recipe's).
    "full": {"batch": 64, "seq_len": 256, "hidden": 7680, "heads": 60, "kv_heads": 8},
    "small": {"batch": 2, "seq_len": 8, "hidden": 256, "heads": 2, "kv_heads": 1},
}


def _rms_norm(x, weight, eps, compute):
    # Over the last dimension; the normalised values are rounded to x's dtype before the weight
    # (in x's dtype too) multiplies them, the product rounded again.
    dtype = x.dtype
    h = x.to(compute)
    h = (h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)).to(dtype)
    return (weight.to(compute) * h.to(compute)).to(dtype)


@torch.no_grad()
def reference(
    hidden_states, q_weight, k_weight, v_weight, q_bias, k_bias, v_bias, q_norm_weight, k_norm_weight, eps
):
    # hidden_states: [batch, seq_len, hidden]; q_weight: [heads * 128, hidden]; k_weight,
    # v_weight: [kv_heads * 128, hidden]; biases to match; q_norm_weight, k_norm_weight: [128];
    # eps: float. Returns q [batch, heads, seq_len, 128], k and v [batch, kv_heads, seq_len, 128]
    # in hidden_states' dtype.
    dtype = hidden_states.dtype
    batch, seq_len, hidden = hidden_states.shape
    compute = torch.promote_types(dtype, torch.float32)
    x = hidden_states.reshape(-1, hidden)
    q = fp8_linear(x, q_weight, q_bias, compute).to(dtype).view(batch, seq_len, -1, HEAD_DIM)
    k = fp8_linear(x, k_weight, k_bias, compute).to(dtype).view(batch, seq_len, -1, HEAD_DIM)
    v = fp8_linear(x, v_weight, v_bias, compute).to(dtype).view(batch, seq_len, -1, HEAD_DIM)
    q = _rms_norm(q, q_norm_weight, eps, compute)
    k = _rms_norm(k, k_norm_weight, eps, compute)
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h = p["batch"], p["seq_len"], p["hidden"]
    q_size, kv_size = p["heads"] * HEAD_DIM, p["kv_heads"] * HEAD_DIM
    bf16 = torch.bfloat16

    def weight(n):
        # N(0, 1/hidden) with a gain uniform in [0.5, 2) per 128 x 128 block (the recipe's
        # per-block magnitude variation).
        gain = torch.rand(n // BLOCK, h // BLOCK, device=device) * 1.5 + 0.5
        gain = gain.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
        return (torch.randn(n, h, device=device) / math.sqrt(h) * gain).to(bf16)

    hidden_states = torch.randn(b, s, h, dtype=bf16, device=device)
    q_weight, k_weight, v_weight = weight(q_size), weight(kv_size), weight(kv_size)
    q_bias = torch.randn(q_size, dtype=bf16, device=device)
    k_bias = torch.randn(kv_size, dtype=bf16, device=device)
    v_bias = torch.randn(kv_size, dtype=bf16, device=device)
    # Norm weights near their trained regime.
    q_norm_weight = (torch.randn(HEAD_DIM, device=device) * 0.1 + 1.0).to(bf16)
    k_norm_weight = (torch.randn(HEAD_DIM, device=device) * 0.1 + 1.0).to(bf16)
    return [
        hidden_states,
        q_weight,
        k_weight,
        v_weight,
        q_bias,
        k_bias,
        v_bias,
        q_norm_weight,
        k_norm_weight,
        EPS,
    ]
