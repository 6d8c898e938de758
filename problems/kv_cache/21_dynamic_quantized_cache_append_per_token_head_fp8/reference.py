"""vLLM's fp8_per_token_head KV cache (Triton reshape-and-cache with dynamic per-token-head
quantization): every new token's key and value heads are quantized to FP8 e4m3 with their own
scale, scale = max(amax(|x|) / 448, 1e-6) over the head's 128 values, and appended to the paged
cache at the slot given by slot_mapping (-1 = padding, not cached). The float32 scales go to
separate per-slot scale caches. Returns the four updated caches."""

import torch

FP8_MAX = 448.0  # largest finite float8_e4m3fn value
MIN_SCALE = 1e-6

WORKLOADS = {
    # Llama-3.1-8B's KV geometry: 8 KV heads of 128; 16-slot blocks.
    "full": {"num_tokens": 2048, "num_kv_heads": 8, "head_dim": 128, "num_blocks": 4096,
             "block_size": 16, "num_padded": 16},
    "small": {"num_tokens": 21, "num_kv_heads": 2, "head_dim": 128, "num_blocks": 12,
              "block_size": 16, "num_padded": 3},
}


def _quantize(x, compute):
    # x: [tokens, heads, head_dim] -> (fp8 values, per-(token, head) scales) in `compute`.
    x = x.to(compute)
    scale = (x.abs().amax(dim=-1) / FP8_MAX).clamp(min=MIN_SCALE)
    q = (x * (1.0 / scale)[..., None]).clamp(-FP8_MAX, FP8_MAX)
    return q.to(torch.float8_e4m3fn), scale


def reference(key, value, slot_mapping, key_cache, value_cache, k_scale_cache, v_scale_cache):
    # key, value: [T, KVH, D]; key_cache, value_cache: [blocks, block_size, KVH, D] fp8 (in place);
    # k_scale_cache, v_scale_cache: [blocks, block_size, KVH] float32 (in place).
    compute = torch.promote_types(key.dtype, torch.float32)
    block_size = key_cache.shape[1]
    valid = slot_mapping >= 0
    slots = slot_mapping[valid]
    blocks, offsets = slots // block_size, slots % block_size
    k_q, k_s = _quantize(key[valid], compute)
    v_q, v_s = _quantize(value[valid], compute)
    key_cache[blocks, offsets] = k_q
    value_cache[blocks, offsets] = v_q
    k_scale_cache[blocks, offsets] = k_s.to(k_scale_cache.dtype)
    v_scale_cache[blocks, offsets] = v_s.to(v_scale_cache.dtype)
    return key_cache, value_cache, k_scale_cache, v_scale_cache


def _kv(shape, device):
    # Keys and values of a decoder layer: O(1) with a few outlier channels, and some heads of
    # some tokens much smaller than others (the case per-token-head scales are for).
    channel = torch.exp(0.6 * torch.randn(shape[-1], device=device))
    token_head = torch.exp(1.0 * torch.randn(shape[:-1], device=device))[..., None]
    return torch.randn(shape, device=device) * channel * token_head


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, kvh, d, nb, bs = (p["num_tokens"], p["num_kv_heads"], p["head_dim"], p["num_blocks"],
                         p["block_size"])
    key = _kv((t, kvh, d), device).to(torch.bfloat16)
    value = _kv((t, kvh, d), device).to(torch.bfloat16)
    # Slots: the real tokens take distinct slots spread over scattered blocks (a mix of
    # sequences appending to partly filled blocks); the last num_padded tokens are padding.
    real = t - p["num_padded"]
    slot_mapping = torch.randperm(nb * bs, device=device)[:real]
    slot_mapping = torch.cat([slot_mapping, torch.full((p["num_padded"],), -1, device=device,
                                                       dtype=slot_mapping.dtype)]).to(torch.int64)
    # The caches already hold earlier tokens, quantized the same way (filled in chunks of
    # blocks to bound the temporaries).
    key_cache = torch.empty(nb, bs, kvh, d, device=device, dtype=torch.float8_e4m3fn)
    value_cache = torch.empty_like(key_cache)
    k_scale_cache = torch.empty(nb, bs, kvh, device=device, dtype=torch.float32)
    v_scale_cache = torch.empty_like(k_scale_cache)
    chunk = 256
    for b in range(0, nb, chunk):
        e = min(b + chunk, nb)
        for cache, scales in ((key_cache, k_scale_cache), (value_cache, v_scale_cache)):
            q, s = _quantize(_kv(((e - b) * bs, kvh, d), device), torch.float32)
            cache[b:e] = q.reshape(e - b, bs, kvh, d)
            scales[b:e] = s.reshape(e - b, bs, kvh)
    return [key, value, slot_mapping, key_cache, value_cache, k_scale_cache, v_scale_cache]
