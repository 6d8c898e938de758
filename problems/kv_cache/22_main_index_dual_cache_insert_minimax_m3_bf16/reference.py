"""MiniMax-M3 sparse-attention prologue as vLLM's fused QK-norm + RoPE + KV-insert kernel does it:
the fused projection output holds q (16 heads), k and v (4 KV heads), the lightning indexer's
query (4 heads) and its key (1 head), all of 128 dims. q, k, the index query and the index key
each get a Gemma-style RMSNorm (gain 1 + w) and a NeoX rotary embedding on their first 64 dims;
k and v go into the main paged cache (k | v side by side per head), the index key into the
indexer's cache. Returns q, the index query and both updated caches.

Numerics follow the published definition: the norm is taken in float32 and rounded to bf16; the
rotation is computed in float32 from the rounded values and rounded again."""

import torch

HEAD_DIM = 128
ROTARY_DIM = 64
NUM_Q_HEADS = 16
NUM_INDEX_Q_HEADS = 4
ROPE_BASE = 5_000_000.0
EPS = 1e-6

WORKLOADS = {
    # 513 tokens; 4 KV heads; a 10-block x 64-slot main cache and index cache; positions below 4,096.
    "full": {"num_tokens": 513, "num_kv_heads": 4, "num_blocks": 10, "block_size": 64, "max_position": 4096},
    "small": {"num_tokens": 20, "num_kv_heads": 4, "num_blocks": 2, "block_size": 64, "max_position": 64},
}


def _norm_rope(x, weight, cos, sin):
    # x: [tokens, heads, 128] bf16; cos, sin: [tokens, 32]. Gemma RMSNorm (gain 1 + w) in float32,
    # rounded to x's dtype; then the first 64 dims rotate as NeoX halves in float32, rounded again.
    wide = torch.promote_types(x.dtype, torch.float32)
    w = x.to(wide)
    normed = (w * torch.rsqrt(w.pow(2).mean(dim=-1, keepdim=True) + EPS) * (1.0 + weight.to(wide))).to(x.dtype)
    c, s = cos[:, None, :].to(wide), sin[:, None, :].to(wide)
    half = ROTARY_DIM // 2
    x1, x2 = normed[..., :half].to(wide), normed[..., half:ROTARY_DIM].to(wide)
    rotated = torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)
    return torch.cat((rotated, normed[..., ROTARY_DIM:]), dim=-1)


@torch.no_grad()
def reference(qkv, q_norm_weight, k_norm_weight, index_q_norm_weight, index_k_norm_weight, positions,
              cos_sin_cache, slot_mapping, index_slot_mapping, kv_cache, index_cache):
    # qkv: [T, (16 + 2 KVH + 4 + 1) * 128] = q | k | v | index_q | index_k;
    # kv_cache: [blocks, KVH, block_size, 256] (k | v per head); index_cache: [blocks, block_size, 128].
    # Both caches are updated in place and returned.
    t = qkv.shape[0]
    num_kv_heads, block_size = kv_cache.shape[1], kv_cache.shape[2]
    widths = [NUM_Q_HEADS, num_kv_heads, num_kv_heads, NUM_INDEX_Q_HEADS, 1]
    q, k, v, iq, ik = (part.reshape(t, -1, HEAD_DIM) for part in qkv.split([n * HEAD_DIM for n in widths], dim=-1))
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)
    q = _norm_rope(q, q_norm_weight, cos, sin)
    k = _norm_rope(k, k_norm_weight, cos, sin)
    iq = _norm_rope(iq, index_q_norm_weight, cos, sin)
    ik = _norm_rope(ik, index_k_norm_weight, cos, sin)[:, 0]
    blocks, offsets = slot_mapping // block_size, slot_mapping % block_size
    # Advanced indices around a slice: the selection is [T, KVH, 256], k | v per head.
    kv_cache[blocks, :, offsets] = torch.cat((k, v), dim=-1)
    index_cache[index_slot_mapping // block_size, index_slot_mapping % block_size] = ik
    return q, iq, kv_cache, index_cache


def _cos_sin_cache(max_position, device):
    # Row p = cos(p * f) | sin(p * f), f_i = 5e6^(-2i / 64), computed in float32, stored in bf16.
    inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, ROTARY_DIM, 2, device=device, dtype=torch.float32) / ROTARY_DIM))
    angles = torch.outer(torch.arange(max_position, device=device, dtype=torch.float32), inv_freq)
    return torch.cat((angles.cos(), angles.sin()), dim=-1).to(torch.bfloat16)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, kvh, nb, bs = p["num_tokens"], p["num_kv_heads"], p["num_blocks"], p["block_size"]
    width = (NUM_Q_HEADS + 2 * kvh + NUM_INDEX_Q_HEADS + 1) * HEAD_DIM
    qkv = torch.randn(t, width, device=device).to(torch.bfloat16)
    # Gemma-style gains are stored as offsets from 1: small values around 0.
    weights = [torch.randn(HEAD_DIM, device=device).to(torch.bfloat16) * 0.1 for _ in range(4)]
    positions = torch.randint(0, p["max_position"], (t,), device=device, dtype=torch.int64)
    cos_sin_cache = _cos_sin_cache(p["max_position"], device)
    # Every token is cached, at distinct slots of each cache, drawn independently for the two.
    slot_mapping = torch.randperm(nb * bs, device=device)[:t]
    index_slot_mapping = torch.randperm(nb * bs, device=device)[:t]
    kv_cache = torch.randn(nb, kvh, bs, 2 * HEAD_DIM, device=device).to(torch.bfloat16)
    index_cache = torch.randn(nb, bs, HEAD_DIM, device=device).to(torch.bfloat16)
    return [qkv, *weights, positions, cos_sin_cache, slot_mapping, index_slot_mapping, kv_cache, index_cache]
