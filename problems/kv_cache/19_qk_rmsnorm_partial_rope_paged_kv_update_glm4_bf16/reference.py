"""GLM-4.5 attention prologue as vLLM runs it: the fused QKV projection output is split into
q, k and v; q and k go through a per-head RMSNorm (use_qk_norm) and a partial NeoX-style rotary
embedding on the first 64 of the 128 head dimensions (partial_rotary_factor 0.5); k and v are
then written into the paged KV cache (reshape_and_cache_flash, NHD layout) at the slots given by
slot_mapping, where -1 marks a padding token that is not cached. Returns the attention query and
the updated key and value caches."""

import math

import torch

HEAD_DIM = 128
ROTARY_DIM = 64  # head_dim * partial_rotary_factor (0.5)
EPS = 1e-5  # rms_norm_eps of GLM-4.5
ROPE_THETA = 1_000_000.0

WORKLOADS = {
    # GLM-4.5 (355B-A32B) without tensor parallelism: 96 query heads, 8 KV heads, head 128.
    "full": {"num_tokens": 2048, "num_heads": 96, "num_kv_heads": 8, "head_dim": HEAD_DIM,
             "qkv_dim": (96 + 2 * 8) * HEAD_DIM, "rotary_dim": ROTARY_DIM,
             "max_position": 131072, "num_blocks": 4096, "block_size": 16, "num_padded": 16},
    "small": {"num_tokens": 24, "num_heads": 6, "num_kv_heads": 2, "head_dim": HEAD_DIM,
              "qkv_dim": (6 + 2 * 2) * HEAD_DIM, "rotary_dim": ROTARY_DIM,
              "max_position": 512, "num_blocks": 32, "block_size": 16, "num_padded": 3},
}


def _rms_norm(x, weight):
    # x: [..., head_dim] in the compute dtype; normalised over the head dimension.
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight


def _rope_neox(x, cos, sin):
    # x: [tokens, heads, head_dim]; cos, sin: [tokens, rotary_dim / 2]. NeoX style: the first
    # rotary_dim dims are split in halves (x1, x2); the remaining dims pass through.
    half = cos.shape[-1]
    x1 = x[..., :half]
    x2 = x[..., half : 2 * half]
    c = cos[:, None, :]
    s = sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, x[..., 2 * half :]], dim=-1)


def reference(qkv, q_norm_weight, k_norm_weight, cos_sin_cache, positions, slot_mapping,
              key_cache, value_cache):
    # qkv: [T, (H + 2 KVH) * D]; key_cache / value_cache: [blocks, block_size, KVH, D] (in place).
    compute = torch.promote_types(qkv.dtype, torch.float32)
    num_tokens = qkv.shape[0]
    block_size, num_kv_heads, head_dim = key_cache.shape[1:]
    num_heads = qkv.shape[1] // head_dim - 2 * num_kv_heads
    q, k, v = qkv.split([num_heads * head_dim, num_kv_heads * head_dim,
                         num_kv_heads * head_dim], dim=-1)
    q = _rms_norm(q.reshape(num_tokens, num_heads, head_dim).to(compute), q_norm_weight.to(compute))
    k = _rms_norm(k.reshape(num_tokens, num_kv_heads, head_dim).to(compute),
                  k_norm_weight.to(compute))
    cos, sin = cos_sin_cache[positions].to(compute).chunk(2, dim=-1)
    q = _rope_neox(q, cos, sin)
    k = _rope_neox(k, cos, sin)
    v = v.reshape(num_tokens, num_kv_heads, head_dim)
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    blocks, offsets = slots // block_size, slots % block_size
    key_cache[blocks, offsets] = k[valid].to(key_cache.dtype)
    value_cache[blocks, offsets] = v[valid].to(value_cache.dtype)
    return q.to(qkv.dtype), key_cache, value_cache


def _cos_sin_cache(max_position, rotary_dim, device):
    # vLLM's RotaryEmbedding table: [max_position, rotary_dim] = cat(cos, sin), computed in
    # float32 and stored in the model dtype.
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, rotary_dim, 2, device=device,
                                                  dtype=torch.float32) / rotary_dim))
    t = torch.arange(max_position, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(torch.bfloat16)


def _batch_layout(num_tokens, max_position, device):
    # A chunked-prefill batch: a few prefill chunks plus single-token decodes. Returns per-request
    # (context length already cached, new tokens), summing to num_tokens new tokens.
    num_decodes = max(1, num_tokens // 32)
    num_prefills = max(1, num_tokens // 256)
    rest = num_tokens - num_decodes
    weights = torch.rand(num_prefills, device=device, dtype=torch.float64) + 0.2
    lens = torch.floor(weights / weights.sum() * (rest - num_prefills)).long() + 1
    lens[0] += rest - int(lens.sum())
    lens = torch.cat([lens, torch.ones(num_decodes, dtype=torch.long, device=device)])
    ctx_cap = max_position - int(lens.max()) - 1
    ctx = torch.randint(0, ctx_cap, (lens.numel(),), device=device)
    ctx[: num_prefills // 2] = 0  # some prefills start a fresh prompt
    return ctx.tolist(), lens.tolist()


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, kvh, d = p["num_tokens"], p["num_heads"], p["num_kv_heads"], p["head_dim"]
    nb, bs = p["num_blocks"], p["block_size"]
    # QKV projection output (with GLM-4.5's attention bias): O(1) activations whose scale varies
    # per channel; the QK norms remove the per-head scale.
    channel_scale = torch.exp(0.5 * torch.randn(p["qkv_dim"], device=device))
    qkv = (torch.randn(t, p["qkv_dim"], device=device) * channel_scale).to(torch.bfloat16)
    q_norm_weight = (1.0 + 0.3 * torch.randn(d, device=device)).to(torch.bfloat16)
    k_norm_weight = (1.0 + 0.3 * torch.randn(d, device=device)).to(torch.bfloat16)
    cos_sin_cache = _cos_sin_cache(p["max_position"], p["rotary_dim"], device)
    # Positions and slots: each request's new tokens continue its context; its blocks are
    # scattered over the pool. The last num_padded tokens are padding (position 0, slot -1).
    real = t - p["num_padded"]
    ctx, lens = _batch_layout(real, p["max_position"], device)
    pool = torch.randperm(nb, device=device)
    positions, slots, used = [], [], 0
    for c, n in zip(ctx, lens):
        pos = torch.arange(c, c + n, device=device)
        first_block = c // bs
        nblk = (c + n - 1) // bs - first_block + 1
        blocks = pool[used : used + nblk]
        used += nblk
        positions.append(pos)
        slots.append(blocks[pos // bs - first_block] * bs + pos % bs)
    pad = p["num_padded"]
    positions.append(torch.zeros(pad, dtype=torch.long, device=device))
    slots.append(torch.full((pad,), -1, dtype=torch.long, device=device))
    positions = torch.cat(positions).to(torch.int64)
    slot_mapping = torch.cat(slots).to(torch.int64)
    # The caches already hold earlier tokens' (normed, rotated) keys and values.
    key_cache = torch.randn(nb, bs, kvh, d, device=device).to(torch.bfloat16)
    value_cache = torch.randn(nb, bs, kvh, d, device=device).to(torch.bfloat16)
    return [qkv, q_norm_weight, k_norm_weight, cos_sin_cache, positions, slot_mapping,
            key_cache, value_cache]
