"""A full attention block with NVFP4 Q/K/V/O projections around an unquantised attention core
(hidden 8192, 64 query heads and 8 key/value heads of 128, rotate-half RoPE from given cos/sin,
causal softmax), as SOL-ExecBench's recipe poses it. Each projection quantises its activation to
NVFP4 itself (e2m1 codes, one e4m3 scale per 16 values, a float32 global scale), takes its
pre-quantised NVFP4 weight, multiplies the dequantised operands in promote_types(dtype, float32)
and rounds to the input dtype. The attention core runs in the input dtype as the published
reference does: every product, sum and matmul result is rounded to it; the softmax is taken in
float32 and its probabilities rounded."""

import math

import torch
import torch.nn.functional as F

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
    # 64 sequences x 128 tokens, hidden 8192, 64 query / 8 key-value heads of 128 (the recipe's).
    "full": {"batch": 64, "seq_len": 128, "hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128},
    "small": {"batch": 2, "seq_len": 8, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16},
}


def _in_dtype(x, dtype):
    """x (computed in the compute dtype) rounded to dtype, back in the compute dtype: what a
    dtype operator's result holds."""
    return x.to(dtype).to(x.dtype)


@torch.no_grad()
def reference(
    hidden_states,
    cos,
    sin,
    q_proj_fp4,
    q_proj_scale,
    q_proj_global,
    k_proj_fp4,
    k_proj_scale,
    k_proj_global,
    v_proj_fp4,
    v_proj_scale,
    v_proj_global,
    o_proj_fp4,
    o_proj_scale,
    o_proj_global,
):
    # hidden_states: [batch, seq_len, hidden]; cos, sin: [batch, seq_len, head_dim]; each
    # projection as (codes [out, in / 2] packed e2m1, scales [out, in / 16] e4m3, global decode
    # scale float): q [heads * head_dim, hidden], k and v [kv_heads * head_dim, hidden],
    # o [hidden, heads * head_dim]. Returns [batch, seq_len, hidden] in hidden_states' dtype.
    dtype = hidden_states.dtype
    compute = torch.promote_types(dtype, torch.float32)
    batch, seq_len, _ = hidden_states.shape
    head_dim = cos.shape[-1]
    device = hidden_states.device

    def linear(x, codes, scales, decode):
        # NVFP4 x [batch, seq_len, in] @ W^T -> [batch, seq_len, out] in the compute dtype,
        # holding dtype values.
        tokens = x.reshape(1, batch * seq_len, x.shape[-1]).to(compute)
        weight = (
            codes.unsqueeze(0),
            scales.unsqueeze(0),
            torch.tensor(decode, dtype=torch.float32, device=device),
        )
        y = nvfp4_bmm(nvfp4_quantize(tokens), weight, compute)
        return _in_dtype(y, dtype).reshape(batch, seq_len, -1)

    def heads(x):
        return x.view(batch, seq_len, -1, head_dim).transpose(1, 2)

    q = heads(linear(hidden_states, q_proj_fp4, q_proj_scale, q_proj_global))
    k = heads(linear(hidden_states, k_proj_fp4, k_proj_scale, k_proj_global))
    v = heads(linear(hidden_states, v_proj_fp4, v_proj_scale, v_proj_global))
    c, s = cos.to(compute).unsqueeze(1), sin.to(compute).unsqueeze(1)

    def rope(x):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return _in_dtype(_in_dtype(x * c, dtype) + _in_dtype(rotated * s, dtype), dtype)

    q, k = rope(q), rope(k)
    groups = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(groups, dim=1)  # each key/value head serves `groups` query heads
    v = v.repeat_interleave(groups, dim=1)
    scores = _in_dtype(_in_dtype(q @ k.transpose(2, 3), dtype) * head_dim**-0.5, dtype)
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).triu(diagonal=1)
    scores = scores.masked_fill(causal, float("-inf"))
    probs = _in_dtype(F.softmax(scores, dim=-1), dtype)
    out = _in_dtype(probs @ v, dtype).transpose(1, 2).reshape(batch, seq_len, -1)
    return linear(out, o_proj_fp4, o_proj_scale, o_proj_global).to(dtype)


def _weight(rows, cols, device):
    """An NVFP4 projection weight drawn N(0, 1/fan_in) and quantised: (codes [rows, cols / 2],
    scales [rows, cols / 16], global decode scale as a Python float)."""
    codes, scales, decode = nvfp4_quantize(torch.randn(rows, cols, device=device) / math.sqrt(cols))
    return [codes, scales, python_float(decode)]


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, s, h, d = p["batch"], p["seq_len"], p["hidden"], p["head_dim"]
    q_out, kv_out = p["heads"] * d, p["kv_heads"] * d
    bf16 = torch.bfloat16
    hidden_states = clear_of_ties(
        torch.randn(b, s, h, dtype=bf16, device=device), lambda n: torch.randn(n, dtype=bf16, device=device)
    )
    cos = torch.randn(b, s, d, dtype=bf16, device=device)
    sin = torch.randn(b, s, d, dtype=bf16, device=device)
    return [
        hidden_states,
        cos,
        sin,
        *_weight(q_out, h, device),
        *_weight(kv_out, h, device),
        *_weight(kv_out, h, device),
        *_weight(h, q_out, device),
    ]
