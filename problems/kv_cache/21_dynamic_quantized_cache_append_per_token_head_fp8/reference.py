"""Dynamic per-token-head FP8 quantisation of new keys and values and their append to a paged
KV cache, as vLLM does with --kv-cache-dtype fp8_per_token_head: every (token, KV head) row of
128 values gets its own scale absmax / 448 (at least 1e-6), is multiplied by the scale's
reciprocal, clamped to the e4m3 range and rounded to FP8 e4m3; the codes go into the cache (held
as bytes) and the scales into per-slot scale caches, at the slots of slot_mapping (-1: a padding
token, not cached). Returns the four updated caches."""

import torch

HEAD_DIM = 128
FP8_MAX = 448.0
MIN_SCALE = 1e-6

WORKLOADS = {
    # 8 KV heads of 128; 2,048 tokens (1..128 padding) into a 256-block x 16-slot cache.
    "full": {"num_tokens": 2048, "num_kv_heads": 8, "num_blocks": 256, "block_size": 16, "max_pads": 128},
    "small": {"num_tokens": 16, "num_kv_heads": 2, "num_blocks": 4, "block_size": 16, "max_pads": 4},
}


def _quantize_rows(x):
    # x: [tokens, heads, 128]. The scale per (token, head) in float32 (float64 for the anchor);
    # the codes from x * (1 / scale), clamped, through float32 into e4m3.
    wide = x.to(torch.promote_types(x.dtype, torch.float32))
    scale = (wide.abs().amax(dim=-1) / FP8_MAX).clamp(min=MIN_SCALE)
    scaled = (wide * (1.0 / scale[..., None])).clamp(-FP8_MAX, FP8_MAX)
    return scaled.to(torch.float32).to(torch.float8_e4m3fn).view(torch.uint8), scale


@torch.no_grad()
def reference(key, value, slot_mapping, key_cache, value_cache, k_scale_cache, v_scale_cache):
    # key, value: [T, H, 128] bf16; key_cache, value_cache: [blocks, block_size, H, 128] uint8
    # (e4m3 codes); k_scale_cache, v_scale_cache: [blocks, block_size, H] float32. All four
    # caches are updated in place and returned.
    block_size = key_cache.shape[1]
    k_codes, k_scale = _quantize_rows(key)
    v_codes, v_scale = _quantize_rows(value)
    cached = slot_mapping >= 0
    slots = slot_mapping[cached]
    blocks, offsets = slots // block_size, slots % block_size
    key_cache[blocks, offsets] = k_codes[cached]
    value_cache[blocks, offsets] = v_codes[cached]
    k_scale_cache[blocks, offsets] = k_scale[cached].to(k_scale_cache.dtype)
    v_scale_cache[blocks, offsets] = v_scale[cached].to(v_scale_cache.dtype)
    return key_cache, value_cache, k_scale_cache, v_scale_cache


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, h, nb, bs = p["num_tokens"], p["num_kv_heads"], p["num_blocks"], p["block_size"]
    key = torch.randn(t, h, HEAD_DIM, device=device).to(torch.bfloat16)
    value = torch.randn(t, h, HEAD_DIM, device=device).to(torch.bfloat16)
    # Distinct slots scattered over the cache; the batch's last 1..max_pads tokens are padding.
    slot_mapping = torch.randperm(nb * bs, device=device)[:t]
    pads = int(torch.randint(1, p["max_pads"] + 1, (1,), device=device))
    slot_mapping[t - pads :] = -1
    # The caches already hold earlier tokens: arbitrary code bytes, scales in [0.5, 1.5).
    key_cache = torch.randint(0, 256, (nb, bs, h, HEAD_DIM), device=device, dtype=torch.uint8)
    value_cache = torch.randint(0, 256, (nb, bs, h, HEAD_DIM), device=device, dtype=torch.uint8)
    k_scale_cache = torch.rand(nb, bs, h, device=device) + 0.5
    v_scale_cache = torch.rand(nb, bs, h, device=device) + 0.5
    return [key, value, slot_mapping, key_cache, value_cache, k_scale_cache, v_scale_cache]
