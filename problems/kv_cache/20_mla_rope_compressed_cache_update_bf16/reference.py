"""DeepSeek-V3 multi-head latent attention (MLA) prologue as vLLM runs it: the compressed query
q_c (after q_a_layernorm) goes through the q_b projection into 128 heads of 192 (128 no-RoPE +
64 RoPE dims); the RoPE part of q and the single shared k_pe head get DeepSeek's YaRN rotary
embedding (GPT-J interleaved style); then the latent kv_c_normed (512) and the rotated k_pe (64)
are concatenated into one 576-wide entry of the compressed paged cache (concat_and_cache_mla),
at the slots of slot_mapping (-1 = padding, not cached). Returns the query and the cache."""

import math

import torch

NUM_HEADS = 128
Q_LORA_RANK = 1536
QK_NOPE = 128
QK_ROPE = 64
KV_LORA_RANK = 512
# YaRN rope scaling of DeepSeek-V3 (config.json rope_scaling).
ROPE_THETA = 10000.0
YARN_FACTOR = 40.0
YARN_ORIGINAL_MAX = 4096
YARN_BETA_FAST = 32
YARN_BETA_SLOW = 1

WORKLOADS = {
    "full": {"num_tokens": 2048, "num_heads": NUM_HEADS, "q_lora_rank": Q_LORA_RANK,
             "qk_head_dim": QK_NOPE + QK_ROPE, "q_dim": NUM_HEADS * (QK_NOPE + QK_ROPE),
             "kv_lora_rank": KV_LORA_RANK, "rope_dim": QK_ROPE,
             "entry_dim": KV_LORA_RANK + QK_ROPE, "max_position": 163840,
             "num_blocks": 2048, "block_size": 64, "num_padded": 16},
    "small": {"num_tokens": 20, "num_heads": 4, "q_lora_rank": 64,
              "qk_head_dim": QK_NOPE + QK_ROPE, "q_dim": 4 * (QK_NOPE + QK_ROPE),
              "kv_lora_rank": KV_LORA_RANK, "rope_dim": QK_ROPE,
              "entry_dim": KV_LORA_RANK + QK_ROPE, "max_position": 1024,
              "num_blocks": 16, "block_size": 64, "num_padded": 3},
}


def _rope_gptj(x, cos, sin):
    # x: [tokens, heads, rope_dim]; cos, sin: [tokens, rope_dim / 2]. GPT-J (interleaved) style:
    # the pair (x[2i], x[2i+1]) is rotated by angle i.
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    c = cos[:, None, :]
    s = sin[:, None, :]
    return torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)


def reference(q_c, w_q_b, kv_c_normed, k_pe, cos_sin_cache, positions, slot_mapping, kv_cache):
    # q_c: [T, 1536]; w_q_b: [128 * 192, 1536]; kv_c_normed: [T, 512]; k_pe: [T, 64];
    # kv_cache: [blocks, block_size, 576], updated in place.
    compute = torch.promote_types(q_c.dtype, torch.float32)
    num_tokens = q_c.shape[0]
    rope_dim = k_pe.shape[1]
    qk_head_dim = QK_NOPE + rope_dim
    num_heads = w_q_b.shape[0] // qk_head_dim
    # q_b_proj: a bf16 GEMM with float32 accumulation whose output is rounded to bf16.
    q = (q_c.to(compute) @ w_q_b.to(compute).T).to(q_c.dtype)
    q = q.reshape(num_tokens, num_heads, qk_head_dim).to(compute)
    cos, sin = cos_sin_cache[positions].to(compute).chunk(2, dim=-1)
    q_pe = _rope_gptj(q[..., QK_NOPE:], cos, sin)
    q = torch.cat([q[..., :QK_NOPE], q_pe], dim=-1)
    k_pe_rot = _rope_gptj(k_pe.to(compute)[:, None, :], cos, sin)[:, 0]
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    block_size = kv_cache.shape[1]
    entry = torch.cat([kv_c_normed.to(compute), k_pe_rot], dim=-1)[valid]
    kv_cache[slots // block_size, slots % block_size] = entry.to(kv_cache.dtype)
    return q.to(q_c.dtype), kv_cache


def _yarn_cos_sin_cache(rope_dim, max_position, device):
    # vLLM's DeepseekScalingRotaryEmbedding table, [max_position, rope_dim] = cat(cos, sin), with
    # original_max * factor = 163,840 rows (the small workload keeps the first rows); mscale = 1
    # since DeepSeek-V3 has mscale = mscale_all_dim = 1. Computed in float32, stored in bf16.
    def correction_dim(num_rotations):
        return (rope_dim * math.log(YARN_ORIGINAL_MAX / (num_rotations * 2 * math.pi))) / (
            2 * math.log(ROPE_THETA))

    low = max(math.floor(correction_dim(YARN_BETA_FAST)), 0)
    high = min(math.ceil(correction_dim(YARN_BETA_SLOW)), rope_dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(rope_dim // 2, device=device, dtype=torch.float32) - low)
            / (high - low)).clamp(0, 1)
    extrapolation_mask = 1 - ramp
    pos_freqs = ROPE_THETA ** (torch.arange(0, rope_dim, 2, device=device,
                                            dtype=torch.float32) / rope_dim)
    inv_freq = (1.0 / (YARN_FACTOR * pos_freqs)) * (1 - extrapolation_mask) + (
        1.0 / pos_freqs) * extrapolation_mask
    t = torch.arange(max_position, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    return torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(torch.bfloat16)


def _batch_layout(num_tokens, max_position, device):
    # A chunked-prefill batch: prefill chunks plus single-token decodes; returns per request the
    # cached context length and the number of new tokens (summing to num_tokens).
    num_decodes = max(1, num_tokens // 32)
    num_prefills = max(1, num_tokens // 256)
    rest = num_tokens - num_decodes
    weights = torch.rand(num_prefills, device=device, dtype=torch.float64) + 0.2
    lens = torch.floor(weights / weights.sum() * (rest - num_prefills)).long() + 1
    lens[0] += rest - int(lens.sum())
    lens = torch.cat([lens, torch.ones(num_decodes, dtype=torch.long, device=device)])
    ctx = torch.randint(0, max_position - int(lens.max()) - 1, (lens.numel(),), device=device)
    ctx[: num_prefills // 2] = 0
    return ctx.tolist(), lens.tolist()


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, nb, bs = p["num_tokens"], p["num_blocks"], p["block_size"]
    # q_c and kv_c_normed come out of RMSNorms (O(1)); k_pe is a raw projection output.
    q_c = torch.randn(t, p["q_lora_rank"], device=device).to(torch.bfloat16)
    w_q_b = (torch.randn(p["q_dim"], p["q_lora_rank"], device=device)
             / math.sqrt(p["q_lora_rank"])).to(torch.bfloat16)
    kv_c_normed = torch.randn(t, p["kv_lora_rank"], device=device).to(torch.bfloat16)
    k_pe = (2.0 * torch.randn(t, p["rope_dim"], device=device)).to(torch.bfloat16)
    cos_sin_cache = _yarn_cos_sin_cache(p["rope_dim"], p["max_position"], device)
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
    positions.append(torch.zeros(p["num_padded"], dtype=torch.long, device=device))
    slots.append(torch.full((p["num_padded"],), -1, dtype=torch.long, device=device))
    positions = torch.cat(positions).to(torch.int64)
    slot_mapping = torch.cat(slots).to(torch.int64)
    # The cache already holds earlier tokens' latents and rotated k_pe.
    kv_cache = torch.randn(nb, bs, p["entry_dim"], device=device).to(torch.bfloat16)
    return [q_c, w_q_b, kv_c_normed, k_pe, cos_sin_cache, positions, slot_mapping, kv_cache]
