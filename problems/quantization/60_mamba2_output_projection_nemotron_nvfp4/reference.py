"""The output projection of a Nemotron-H Mamba2 mixer in NVFP4 on pre-quantised operands
(1 x 8192 tokens, 1920 -> 1920), as SOL-ExecBench's recipe poses it: both the activation and the
weight arrive as e2m1 codes (two to a byte) with one e4m3 scale per 16 values and a float32
global decode scale each; the reference dequantises them in promote_types(float32 global scale
dtype, float32) and returns their product in that dtype. No rounding decision is left to the
kernel: the quantisation happened before the call."""

import math

import torch

# NVFP4 as the recipe's reference writes it: values in e2m1 (two to a byte, the first in the low
# nibble, as torch.float4_e2m1fn_x2), one float8_e4m3fn scale per 16 consecutive values along the
# last dimension, and one float32 global scale per tensor. Quantising a tensor x: the global
# encode scale is E4M3_MAX * E2M1_MAX / max|x| (1 for an all-zero tensor); a block's scale is
# (max|block| / E2M1_MAX) * encode, clamped to the e4m3 range and rounded to e4m3; each value is
# multiplied by encode / scale (0 where the scale rounded to 0), clamped to [-6, 6] and rounded to
# the nearest e2m1 value, ties to the even code. The global decode scale is 1 / encode; a value
# dequantises as e2m1 * (scale * decode), in the compute dtype.
E2M1_MAX = 6.0  # the largest e2m1 magnitude
E4M3_MAX = 448.0  # the largest finite float8_e4m3fn
SF_VEC = 16  # values per e4m3 block scale
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
# Rounding bounds between consecutive e2m1 magnitudes; at a bound the even code wins, which is the
# upper neighbour at 0.75, 1.75 and 3.5 and the lower one at the others.
E2M1_BOUNDS_DOWN = (0.25, 1.25, 2.5, 5.0)  # a magnitude on one of these rounds down
E2M1_BOUNDS_UP = (0.75, 1.75, 3.5)  # a magnitude on one of these rounds up


def nvfp4_encode_scales(x):
    """x [..., cols] -> (the global encode scale (0-d, x's dtype), the block scales before their
    e4m3 rounding [..., cols // 16])."""
    amax = x.abs().amax()
    encode = torch.where(amax > 0, (E4M3_MAX * E2M1_MAX) / amax, torch.ones_like(amax))
    block_amax = x.unflatten(-1, (-1, SF_VEC)).abs().amax(dim=-1)
    return encode, block_amax / E2M1_MAX * encode


def nvfp4_quantize(x):
    """x [..., cols] in the compute dtype -> (codes float4_e2m1fn_x2 [..., cols // 2], block scales
    float8_e4m3fn [..., cols // 16], the global decode scale (0-d, x's dtype))."""
    encode, block = nvfp4_encode_scales(x)
    scale = block.clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    decoded = scale.to(x.dtype)
    factor = torch.where(decoded > 0, encode / decoded, torch.zeros_like(decoded))
    scaled = (x.unflatten(-1, (-1, SF_VEC)) * factor[..., None]).flatten(-2).clamp(-E2M1_MAX, E2M1_MAX)
    magnitude = scaled.abs()
    code = torch.zeros(scaled.shape, dtype=torch.uint8, device=x.device)
    for bound in E2M1_BOUNDS_DOWN:
        code += (magnitude > bound).to(torch.uint8)
    for bound in E2M1_BOUNDS_UP:
        code += (magnitude >= bound).to(torch.uint8)
    code |= (scaled < 0).to(torch.uint8) << 3  # the sign bit; -0.0 keeps code 0
    packed = code[..., 0::2] | (code[..., 1::2] << 4)
    return packed.view(torch.float4_e2m1fn_x2), scale, 1.0 / encode


def nvfp4_dequantize(codes, scale, decode, compute):
    """codes float4_e2m1fn_x2 [..., cols // 2], scale float8_e4m3fn [..., cols // 16], decode
    (0-d) -> the values [..., cols] in `compute`."""
    byte = codes.view(torch.uint8).to(torch.int64)
    table = torch.tensor(E2M1_VALUES, dtype=compute, device=byte.device)
    values = torch.stack((table[byte & 15], table[byte >> 4]), dim=-1).flatten(-2)
    block_scale = scale.to(compute) * decode.to(compute)
    return (values.unflatten(-1, (-1, SF_VEC)) * block_scale[..., None]).flatten(-2)


def nvfp4_bmm(a, b, compute):
    """a = (codes, scales, decode) [batch, M, K], b likewise [batch, N, K] -> the dequantised
    a @ b^T [batch, M, N] in `compute`."""
    return torch.bmm(nvfp4_dequantize(*a, compute), nvfp4_dequantize(*b, compute).transpose(1, 2))


WORKLOADS = {
    # One batch of 8,192 tokens, 1920 -> 1920 (the recipe's axes).
    "full": {"batch": 1, "tokens": 8192, "in_features": 1920, "out_features": 1920},
    "small": {"batch": 1, "tokens": 40, "in_features": 64, "out_features": 48},
}


@torch.no_grad()
def reference(
    hidden_states,
    hidden_states_scale,
    global_decode_scale_input,
    weight,
    weight_scale,
    global_decode_scale_weight,
):
    # hidden_states: [batch, tokens, in / 2] packed e2m1, hidden_states_scale: [batch, tokens,
    # in / 16] e4m3, global_decode_scale_input: [] float32; weight: [batch, out, in / 2],
    # weight_scale: [batch, out, in / 16], global_decode_scale_weight: [] float32. Returns
    # [batch, tokens, out] in promote_types(global scale dtype, float32).
    compute = torch.promote_types(global_decode_scale_input.dtype, torch.float32)
    a = (hidden_states, hidden_states_scale, global_decode_scale_input)
    b = (weight, weight_scale, global_decode_scale_weight)
    return nvfp4_bmm(a, b, compute)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, t, k, n = p["batch"], p["tokens"], p["in_features"], p["out_features"]
    x = nvfp4_quantize(torch.randn(b, t, k, device=device))
    # The weight at the 1/sqrt(fan_in) generator scale (the recipe's choice).
    w = nvfp4_quantize(torch.randn(b, n, k, device=device) / math.sqrt(k))
    return [*x, *w]
