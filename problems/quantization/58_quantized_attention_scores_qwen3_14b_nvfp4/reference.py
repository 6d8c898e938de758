"""The attention core of a Qwen3-14B layer (40 query heads and 8 key/value heads of 128) with both
of its GEMMs in NVFP4, as SOL-ExecBench's recipe poses it: the reference quantises the queries
and the (group-repeated) keys to NVFP4 itself (e2m1 codes, one e4m3 scale per 16 values along
head_dim, a float32 global scale per tensor), multiplies the dequantised operands in
promote_types(dtype, float32) and rounds the scores to the input dtype; scales them by
head_dim^-0.5 and adds the additive causal mask (each in the dtype); takes the softmax in float32
and rounds the probabilities; quantises them (16 per scale along the keys) and the transposed
values (16 per scale along the sequence), multiplies those and rounds. Returns the attention
output and the probabilities."""

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


WORKLOADS = {
    # 64 sequences x 256 tokens, 40 query / 8 key-value heads of 128 (the recipe's axes).
    "full": {"batch": 64, "heads": 40, "kv_heads": 8, "seq_len": 256, "head_dim": 128},
    "small": {"batch": 2, "heads": 4, "kv_heads": 2, "seq_len": 32, "head_dim": 32},
}


def _in_dtype(x, dtype):
    """x (computed in the compute dtype) rounded to dtype, back in the compute dtype: what a
    dtype operator's result holds."""
    return x.to(dtype).to(x.dtype)


@torch.no_grad()
def reference(query_states, key_states, value_states, attention_mask):
    # query_states: [batch, heads, seq_len, head_dim]; key_states, value_states: [batch,
    # kv_heads, seq_len, head_dim]; attention_mask: [batch, 1, seq_len, seq_len] additive (0, or
    # the dtype's most negative value above the diagonal). Returns (attn_output [batch, heads,
    # seq_len, head_dim], attn_weights [batch, heads, seq_len, seq_len]) in the dtype.
    dtype = query_states.dtype
    compute = torch.promote_types(dtype, torch.float32)
    batch, heads, seq_len, head_dim = query_states.shape
    groups = heads // key_states.shape[1]
    # Each key/value head serves `groups` consecutive query heads.
    k = key_states.repeat_interleave(groups, dim=1).reshape(batch * heads, seq_len, head_dim)
    v = value_states.repeat_interleave(groups, dim=1).reshape(batch * heads, seq_len, head_dim)
    q = query_states.reshape(batch * heads, seq_len, head_dim)
    scores = _in_dtype(
        nvfp4_bmm(nvfp4_quantize(q.to(compute)), nvfp4_quantize(k.to(compute)), compute), dtype
    )
    scores = _in_dtype(scores * head_dim**-0.5, dtype).view(batch, heads, seq_len, seq_len)
    scores = _in_dtype(scores + attention_mask.to(compute), dtype)
    probs = F.softmax(scores, dim=-1).to(dtype)
    p = nvfp4_quantize(probs.to(compute).reshape(batch * heads, seq_len, seq_len))
    v_t = nvfp4_quantize(v.transpose(1, 2).contiguous().to(compute))  # [batch * heads, dim, seq]
    out = nvfp4_bmm(p, v_t, compute).to(dtype)
    return out.view(batch, heads, seq_len, head_dim), probs


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    b, h, kvh, s, d = p["batch"], p["heads"], p["kv_heads"], p["seq_len"], p["head_dim"]
    bf16 = torch.bfloat16

    def draw(n):
        return torch.randn(n, dtype=bf16, device=device)

    # The reference quantises the queries and keys as they come: their values are kept clear of
    # quantisation ties (the keys as one tensor: repeating them for the groups repeats their
    # blocks and leaves the global scale as it is).
    query_states = clear_of_ties(torch.randn(b, h, s, d, dtype=bf16, device=device), draw)
    key_states = clear_of_ties(torch.randn(b, kvh, s, d, dtype=bf16, device=device), draw)
    value_states = torch.randn(b, kvh, s, d, dtype=bf16, device=device)
    attention_mask = torch.zeros(b, 1, s, s, dtype=bf16, device=device)
    causal = torch.ones(s, s, dtype=torch.bool, device=device).triu(diagonal=1)
    attention_mask[:, :, causal] = torch.finfo(bf16).min
    return [query_states, key_states, value_states, attention_mask]
