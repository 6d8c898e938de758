"""MiniMax-M3 sparse-attention prologue as vLLM runs it (fused_minimax_m3_qknorm_rope_kv_insert):
one fused projection emits [q | k | v | index_q | index_k]; q, k, index_q and index_k get a
per-head Gemma RMSNorm (weight applied as 1 + w) and a partial NeoX rotary embedding on the first
64 of the 128 head dims; k and v are inserted into the main paged KV cache and the single
index-key head into the lightning indexer's own paged cache, each with its own slot mapping
(-1 = padding, not cached). Returns q, index_q and the two updated caches."""

import torch

HEAD_DIM = 128
INDEX_HEAD_DIM = 128
ROTARY_DIM = 64  # head_dim * partial_rotary_factor (0.5)
EPS = 1e-6  # rms_norm_eps of MiniMax-M3
ROPE_THETA = 5_000_000.0

WORKLOADS = {
    # MiniMax-M3 without tensor parallelism: 64 query heads, 4 KV heads, 4 index-query heads
    # (= KV heads) and 1 index-key head, all of 128.
    "full": {"num_tokens": 513, "num_heads": 64, "num_kv_heads": 4, "head_dim": HEAD_DIM,
             "num_index_heads": 4, "index_head_dim": INDEX_HEAD_DIM,
             "qkv_dim": (64 + 2 * 4) * HEAD_DIM + (4 + 1) * INDEX_HEAD_DIM,
             "rotary_dim": ROTARY_DIM, "max_position": 1048576, "num_blocks": 1024,
             "num_index_blocks": 1024, "block_size": 64, "num_padded": 7},
    "small": {"num_tokens": 19, "num_heads": 8, "num_kv_heads": 2, "head_dim": HEAD_DIM,
              "num_index_heads": 2, "index_head_dim": INDEX_HEAD_DIM,
              "qkv_dim": (8 + 2 * 2) * HEAD_DIM + (2 + 1) * INDEX_HEAD_DIM,
              "rotary_dim": ROTARY_DIM, "max_position": 2048, "num_blocks": 8,
              "num_index_blocks": 6, "block_size": 64, "num_padded": 3},
}


def _gemma_rms_norm(x, weight):
    # Gemma-style RMSNorm over the head dimension: the stored weight is an offset from 1.
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * (1.0 + weight)


def _rope_neox(x, cos, sin):
    # x: [tokens, heads, head_dim]; cos, sin: [tokens, rotary_dim / 2]; NeoX halves on the
    # first rotary_dim dims, the rest passes through.
    half = cos.shape[-1]
    x1 = x[..., :half]
    x2 = x[..., half : 2 * half]
    c = cos[:, None, :]
    s = sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, x[..., 2 * half :]], dim=-1)


def reference(qkv, q_norm_weight, k_norm_weight, index_q_norm_weight, index_k_norm_weight,
              cos_sin_cache, positions, slot_mapping, index_slot_mapping, kv_cache, index_cache):
    # qkv: [T, H*D + 2*KVH*D + IH*ID + ID]; kv_cache: [blocks, 2, block_size, KVH, D] (k at 0,
    # v at 1) and index_cache: [index_blocks, block_size, ID], both updated in place.
    compute = torch.promote_types(qkv.dtype, torch.float32)
    t = qkv.shape[0]
    block_size, kvh, d = kv_cache.shape[2:]
    di = index_cache.shape[2]
    ih = kvh  # index-query heads shard like the KV heads
    h = (qkv.shape[1] - 2 * kvh * d - (ih + 1) * di) // d
    q, k, v, iq, ik = qkv.split([h * d, kvh * d, kvh * d, ih * di, di], dim=-1)
    cos, sin = cos_sin_cache[positions].to(compute).chunk(2, dim=-1)

    def norm_rope(x, heads, dim, weight):
        x = _gemma_rms_norm(x.reshape(t, heads, dim).to(compute), weight.to(compute))
        return _rope_neox(x, cos, sin)

    q = norm_rope(q, h, d, q_norm_weight)
    k = norm_rope(k, kvh, d, k_norm_weight)
    iq = norm_rope(iq, ih, di, index_q_norm_weight)
    ik = norm_rope(ik, 1, di, index_k_norm_weight)[:, 0]
    v = v.reshape(t, kvh, d)

    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    blocks, offsets = slots // block_size, slots % block_size
    kv_cache[blocks, 0, offsets] = k[valid].to(kv_cache.dtype)
    kv_cache[blocks, 1, offsets] = v[valid].to(kv_cache.dtype)
    ivalid = index_slot_mapping >= 0
    islots = index_slot_mapping[ivalid]
    index_cache[islots // block_size, islots % block_size] = ik[ivalid].to(index_cache.dtype)
    return q.to(qkv.dtype), iq.to(qkv.dtype), kv_cache, index_cache


def _cos_sin_cache(max_position, rotary_dim, device):
    # vLLM's RotaryEmbedding table, [max_position, rotary_dim] = cat(cos, sin), computed in
    # float32 and stored in the model dtype.
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, rotary_dim, 2, device=device,
                                                  dtype=torch.float32) / rotary_dim))
    t = torch.arange(max_position, device=device, dtype=torch.float32)
    return torch.cat([torch.outer(t, inv_freq).cos(), torch.outer(t, inv_freq).sin()],
                     dim=-1).to(torch.bfloat16)


def _batch_layout(num_tokens, max_position, device):
    # A chunked-prefill batch: a couple of prefill chunks (one a fresh prompt, one continuing a
    # long context) plus single-token decodes at long contexts.
    num_decodes = max(1, num_tokens // 16)
    num_prefills = 2
    rest = num_tokens - num_decodes
    first = int(torch.randint(1, rest, (1,), device=device))
    lens = [first, rest - first] + [1] * num_decodes
    ctx = torch.randint(0, max_position // 4, (len(lens),), device=device).tolist()
    ctx[0] = 0
    return ctx, lens


def _slots(ctx, lens, num_blocks, block_size, device):
    pool = torch.randperm(num_blocks, device=device)
    slots, used = [], 0
    for c, n in zip(ctx, lens):
        pos = torch.arange(c, c + n, device=device)
        first_block = c // block_size
        nblk = (c + n - 1) // block_size - first_block + 1
        blocks = pool[used : used + nblk]
        used += nblk
        slots.append(blocks[pos // block_size - first_block] * block_size + pos % block_size)
    return torch.cat(slots)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, kvh, d = p["num_tokens"], p["num_heads"], p["num_kv_heads"], p["head_dim"]
    di, bs = p["index_head_dim"], p["block_size"]
    # Fused projection output: O(1) activations with per-channel scale; the norms remove it.
    channel_scale = torch.exp(0.5 * torch.randn(p["qkv_dim"], device=device))
    qkv = (torch.randn(t, p["qkv_dim"], device=device) * channel_scale).to(torch.bfloat16)
    # Gemma norm weights are stored as offsets from 1.
    q_norm_weight = (0.3 * torch.randn(d, device=device)).to(torch.bfloat16)
    k_norm_weight = (0.3 * torch.randn(d, device=device)).to(torch.bfloat16)
    index_q_norm_weight = (0.3 * torch.randn(di, device=device)).to(torch.bfloat16)
    index_k_norm_weight = (0.3 * torch.randn(di, device=device)).to(torch.bfloat16)
    cos_sin_cache = _cos_sin_cache(p["max_position"], p["rotary_dim"], device)
    real = t - p["num_padded"]
    ctx, lens = _batch_layout(real, p["max_position"], device)
    pad_pos = torch.zeros(p["num_padded"], dtype=torch.long, device=device)
    pad_slot = torch.full((p["num_padded"],), -1, dtype=torch.long, device=device)
    positions = torch.cat([torch.cat([torch.arange(c, c + n, device=device)
                                      for c, n in zip(ctx, lens)]), pad_pos]).to(torch.int64)
    # The main cache and the index cache are separate KV-cache groups: same block size, but
    # each request's blocks come from its own pool.
    slot_mapping = torch.cat([_slots(ctx, lens, p["num_blocks"], bs, device),
                              pad_slot]).to(torch.int64)
    index_slot_mapping = torch.cat([_slots(ctx, lens, p["num_index_blocks"], bs, device),
                                    pad_slot]).to(torch.int64)
    # Both caches already hold earlier tokens.
    kv_cache = torch.randn(p["num_blocks"], 2, bs, kvh, d, device=device).to(torch.bfloat16)
    index_cache = torch.randn(p["num_index_blocks"], bs, di, device=device).to(torch.bfloat16)
    return [qkv, q_norm_weight, k_norm_weight, index_q_norm_weight, index_k_norm_weight,
            cos_sin_cache, positions, slot_mapping, index_slot_mapping, kv_cache, index_cache]
