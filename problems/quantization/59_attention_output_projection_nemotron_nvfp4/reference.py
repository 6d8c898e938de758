"""The attention output projection of a Nemotron 3 Nano layer in NVFP4 (4096 attention features
-> hidden 2688, padded to 2816), as SOL-ExecBench's recipe poses it: the activation arrives
unquantised and the reference quantises it to NVFP4 itself (e2m1 codes, one e4m3 scale per 16
values, a float32 global scale); the weight arrives pre-quantised; the dequantised operands are
multiplied in promote_types(dtype, float32) and the product returned in that dtype (float32 for
bfloat16 input: the recipe's reference does not round it back)."""

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


# Input conditioning: the reference quantises this input itself, so a kernel must take the same
# rounding decisions. make_inputs redraws the values (and whole blocks) whose decisions lie within
# MARGIN (relative) of a tie -- an e2m1 bound for a value, an e4m3 midpoint for a block scale --
# so that float32 arithmetic in another order, and the float64 anchor run, decide alike.
MARGIN = 2.0**-16
MAX_REDRAWS = 32


def _near_e4m3_midpoint(v):
    """Whether each positive v (float64) lies within MARGIN of a midpoint between neighbouring
    float8_e4m3fn values (3 mantissa bits; subnormals step 2^-9)."""
    step = torch.exp2(torch.floor(torch.log2(v.clamp(min=2.0**-6))) - 3)
    frac = v / step - torch.floor(v / step)
    return (v > 0) & (v < E4M3_MAX) & ((frac - 0.5).abs() * step < MARGIN * v)


def nvfp4_ties(x):
    """x [..., cols] -> bool [..., cols]: the values whose quantisation decision is near a tie (a
    block whose scale is near one marks all its values)."""
    x = x.double()
    encode, block = nvfp4_encode_scales(x)
    decoded = block.clamp(max=E4M3_MAX).to(torch.float8_e4m3fn).double()
    factor = torch.where(decoded > 0, encode / decoded, torch.zeros_like(decoded))
    magnitude = (x.unflatten(-1, (-1, SF_VEC)).abs() * factor[..., None]).flatten(-2)
    ties = _near_e4m3_midpoint(block).repeat_interleave(SF_VEC, dim=-1)
    for bound in E2M1_BOUNDS_DOWN + E2M1_BOUNDS_UP:
        ties |= (magnitude - bound).abs() < MARGIN * bound
    return ties


def clear_of_ties(x, draw):
    """Redraws (with draw(n) -> n fresh values in x's dtype) the values of x near a quantisation
    tie until there are none; bounded. A meta tensor has no values and is returned as it is."""
    if x.device.type == "meta":
        return x
    for _ in range(MAX_REDRAWS):
        ties = nvfp4_ties(x)
        count = int(ties.sum())
        if count == 0:
            return x
        x = x.clone()
        x[ties] = draw(count)
    raise RuntimeError(f"input still has values near a quantisation tie after {MAX_REDRAWS} redraws")


def python_float(t):
    """A 0-d tensor's value as a Python float, as the recipe passes a weight's global decode
    scale; a meta tensor has no value, and 1.0 stands in for it."""
    return 1.0 if t.device.type == "meta" else t.item()


WORKLOADS = {
    # 64 sequences x 512 tokens, 4096 -> 2816 (hidden 2688 padded; the recipe's axes).
    "full": {"tokens": 32768, "in_features": 4096, "out_features": 2816},
    "small": {"tokens": 48, "in_features": 64, "out_features": 48},
}


@torch.no_grad()
def reference(hidden_states, weight_fp4, weight_scale, weight_global):
    # hidden_states: [tokens, in_features]; weight_fp4: [out_features, in_features / 2] packed
    # e2m1; weight_scale: [out_features, in_features / 16] e4m3; weight_global: float (the
    # weight's global decode scale). Returns [tokens, out_features] in
    # promote_types(hidden_states.dtype, float32).
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    activation = nvfp4_quantize(hidden_states.unsqueeze(0).to(compute))
    decode = torch.tensor(weight_global, dtype=torch.float32, device=hidden_states.device)
    weight = (weight_fp4.unsqueeze(0), weight_scale.unsqueeze(0), decode)
    return nvfp4_bmm(activation, weight, compute).squeeze(0)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, k, n = p["tokens"], p["in_features"], p["out_features"]
    bf16 = torch.bfloat16
    hidden_states = clear_of_ties(
        torch.randn(t, k, dtype=bf16, device=device), lambda m: torch.randn(m, dtype=bf16, device=device)
    )
    # The recipe scales its weight draw by a constant it does not show; 0.02 (the usual init
    # standard deviation) is used here. NVFP4's global scale makes the codes independent of it.
    weight_fp4, weight_scale, decode = nvfp4_quantize(torch.randn(n, k, device=device) * 0.02)
    return [hidden_states, weight_fp4, weight_scale, python_float(decode)]
