"""GLM-4.5 (MoE) attention prologue as vLLM runs it, with the shapes of vLLM's fused
QK-norm + RoPE + KV-cache pass: the QKV projection output is split into q, k and v; q and k go
through a per-head RMSNorm and a NeoX-style rotary embedding on the first 64 of their 128
dimensions (partial_rotary_factor 0.5); k and v are written into the paged KV cache at the slots
of slot_mapping, where -1 marks a padding token that is not cached. Returns the query and the
updated cache.

Numerics follow the published definition: the norm is taken in float32 and rounded to the
weight dtype before the gain; the gain and the rotation are applied in the input dtype (bf16
arithmetic), so every step rounds where vLLM's eager path rounds."""

import torch

HEAD_DIM = 128
ROTARY_DIM = 64  # head_dim * partial_rotary_factor (0.5)
ROPE_BASE = 10000.0
EPS = 1e-5  # passed as a Python float

WORKLOADS = {
    # 32 query heads and 8 KV heads of 128; 2,048 tokens, up to 128 of them padding; a
    # 256-block x 16-slot cache; positions below 4,096.
    "full": {"num_tokens": 2048, "num_heads": 32, "num_kv_heads": 8, "num_blocks": 256,
             "block_size": 16, "max_position": 4096, "max_pads": 128},
    "small": {"num_tokens": 24, "num_heads": 4, "num_kv_heads": 2, "num_blocks": 8,
              "block_size": 16, "max_position": 64, "max_pads": 4},
}


def _rms_norm_per_head(x, weight, eps):
    # x: [tokens, heads, 128] in the input dtype. Normalised in float32 (float64 for the anchor),
    # rounded to the weight dtype, scaled by the gain in that dtype.
    wide = x.to(torch.promote_types(x.dtype, torch.float32))
    normed = wide * torch.rsqrt(wide.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (normed.to(weight.dtype) * weight).to(x.dtype)


def _partial_neox_rope(x, cos, sin):
    # x: [tokens, heads, 128]; cos, sin: [tokens, 32]. The first 64 dims rotate as two halves
    # (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), in x's dtype; the last 64 pass through.
    cos = cos[:, None, :].to(x.dtype)
    sin = sin[:, None, :].to(x.dtype)
    half = ROTARY_DIM // 2
    x1, x2, rest = x[..., :half], x[..., half:ROTARY_DIM], x[..., ROTARY_DIM:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest), dim=-1)


@torch.no_grad()
def reference(qkv, positions, q_norm_weight, k_norm_weight, cos_sin_cache, slot_mapping, kv_cache, eps):
    # qkv: [T, (H + 2 KVH) * 128]; kv_cache: [2 (k, v), blocks, block_size, KVH, 128], updated in
    # place and returned.
    num_tokens = qkv.shape[0]
    block_size, num_kv_heads = kv_cache.shape[2], kv_cache.shape[3]
    num_heads = qkv.shape[1] // HEAD_DIM - 2 * num_kv_heads
    q, k, v = qkv.split([num_heads * HEAD_DIM, num_kv_heads * HEAD_DIM, num_kv_heads * HEAD_DIM], dim=-1)
    q = _rms_norm_per_head(q.reshape(num_tokens, num_heads, HEAD_DIM), q_norm_weight, eps)
    k = _rms_norm_per_head(k.reshape(num_tokens, num_kv_heads, HEAD_DIM), k_norm_weight, eps)
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)
    q = _partial_neox_rope(q, cos, sin)
    k = _partial_neox_rope(k, cos, sin)
    cached = slot_mapping >= 0
    slots = slot_mapping[cached]
    blocks, offsets = slots // block_size, slots % block_size
    kv_cache[0, blocks, offsets] = k[cached]
    kv_cache[1, blocks, offsets] = v.reshape(num_tokens, num_kv_heads, HEAD_DIM)[cached]
    return q, kv_cache


def _cos_sin_cache(max_position, device):
    # vLLM's rotary table: row p = cos(p * f) | sin(p * f), f_i = base^(-2i / 64), computed in
    # float32 and stored in bf16.
    inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, ROTARY_DIM, 2, device=device, dtype=torch.float32) / ROTARY_DIM))
    angles = torch.outer(torch.arange(max_position, device=device, dtype=torch.float32), inv_freq)
    return torch.cat((angles.cos(), angles.sin()), dim=-1).to(torch.bfloat16)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, kvh = p["num_tokens"], p["num_heads"], p["num_kv_heads"]
    slots_total = p["num_blocks"] * p["block_size"]
    qkv = torch.randn(t, (h + 2 * kvh) * HEAD_DIM, device=device).to(torch.bfloat16)
    positions = torch.randint(0, p["max_position"], (t,), device=device, dtype=torch.int64)
    q_norm_weight = torch.randn(HEAD_DIM, device=device).to(torch.bfloat16)
    k_norm_weight = torch.randn(HEAD_DIM, device=device).to(torch.bfloat16)
    cos_sin_cache = _cos_sin_cache(p["max_position"], device)
    # Distinct slots scattered over the cache; the batch's last 1..max_pads tokens are padding.
    slot_mapping = torch.randperm(slots_total, device=device)[:t]
    pads = int(torch.randint(1, p["max_pads"] + 1, (1,), device=device))
    slot_mapping[t - pads :] = -1
    kv_cache = torch.randn(2, p["num_blocks"], p["block_size"], kvh, HEAD_DIM, device=device).to(torch.bfloat16)
    return [qkv, positions, q_norm_weight, k_norm_weight, cos_sin_cache, slot_mapping, kv_cache, EPS]
