"""vLLM's cp_gather_and_upconvert_fp8_kv_cache for DeepSeek-V3.2 sparse MLA with the
fp8_ds_mla cache: each 656-byte cache entry holds 512 FP8 e4m3 latent values in four tiles of
128, the four tiles' float32 scales, and the 64 RoPE key values in bf16. For a prefill chunk,
every request's cached tokens 0..seq_lens[b]-1 are gathered from its paged blocks into a
contiguous bf16 workspace at row workspace_starts[b]: latent = fp8 * tile scale, rope copied."""

import torch

NOPE = 512  # kv_lora_rank, stored as FP8
TILE = 128  # FP8 values per scale
ROPE = 64  # qk_rope_head_dim, stored as bf16
ENTRY_BYTES = NOPE + 4 * (NOPE // TILE) + 2 * ROPE  # 656
FP8_MAX = 448.0
FLT_MIN = 1.1754943508222875e-38

WORKLOADS = {
    "full": {"num_tokens": 641, "batch": 5, "entry_bytes": ENTRY_BYTES, "head_dim": NOPE + ROPE,
             "num_blocks": 1024, "block_size": 64, "max_blocks_per_seq": 64},
    "small": {"num_tokens": 150, "batch": 3, "entry_bytes": ENTRY_BYTES, "head_dim": NOPE + ROPE,
              "num_blocks": 24, "block_size": 16, "max_blocks_per_seq": 8},
}


def reference(src_cache, block_table, seq_lens, workspace_starts):
    # src_cache: [blocks, block_size, 656] uint8; block_table: [batch, max blocks] int32;
    # seq_lens, workspace_starts: [batch] int32. Every input is bytes or indices; the workspace
    # is bf16, so the arithmetic runs in promote_types(bf16, float32).
    compute = torch.promote_types(torch.bfloat16, torch.float32)
    block_size = src_cache.shape[1]
    lens = seq_lens.long()
    seq = torch.repeat_interleave(torch.arange(lens.numel(), device=lens.device), lens)
    first = torch.cumsum(lens, 0) - lens
    pos = torch.arange(seq.numel(), device=lens.device) - first[seq]  # position in the request
    rows = workspace_starts.long()[seq] + pos
    blocks = block_table.long()[seq, pos // block_size]
    entries = src_cache[blocks, pos % block_size]  # [tokens, 656] uint8
    fp8 = entries[:, :NOPE].view(torch.float8_e4m3fn).to(compute)
    scales = entries[:, NOPE : NOPE + 16].contiguous().view(torch.float32).to(compute)
    nope = (fp8.reshape(-1, NOPE // TILE, TILE) * scales[:, :, None]).reshape(-1, NOPE)
    rope = entries[:, NOPE + 16 :].contiguous().view(torch.bfloat16)
    num_rows = int(seq_lens.sum())
    dst = torch.empty(num_rows, NOPE + ROPE, dtype=torch.bfloat16, device=src_cache.device)
    dst[rows, :NOPE] = nope.to(torch.bfloat16)
    dst[rows, NOPE:] = rope
    return dst


def _ds_mla_entries(num_entries, device):
    # What vLLM's concat_and_cache_ds_mla writes for kv_c (bf16, 512) and k_pe (bf16, 64): per
    # 128-value tile, scale = max(amax / 448, FLT_MIN) and e4m3(x / scale); rope as bf16 bytes.
    # Tiles of a latent vary in range, as the latent channels do.
    kv_c = (torch.randn(num_entries, NOPE // TILE, TILE, device=device)
            * torch.exp(0.7 * torch.randn(num_entries, NOPE // TILE, 1, device=device)))
    kv_c = kv_c.to(torch.bfloat16).to(torch.float32)
    k_pe = (2.0 * torch.randn(num_entries, ROPE, device=device)).to(torch.bfloat16)
    scale = (kv_c.abs().amax(dim=-1) / FP8_MAX).clamp(min=FLT_MIN)
    codes = (kv_c / scale[..., None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return torch.cat([codes.reshape(num_entries, NOPE).view(torch.uint8),
                      scale.contiguous().view(torch.uint8),
                      k_pe.view(torch.uint8)], dim=1)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, b, nb, bs, mb = (p["num_tokens"], p["batch"], p["num_blocks"], p["block_size"],
                        p["max_blocks_per_seq"])
    # The whole pool holds valid entries of earlier tokens (filled in chunks of blocks).
    src_cache = torch.empty(nb, bs, ENTRY_BYTES, dtype=torch.uint8, device=device)
    chunk = 128
    for s in range(0, nb, chunk):
        e = min(s + chunk, nb)
        src_cache[s:e] = _ds_mla_entries((e - s) * bs, device).reshape(e - s, bs, ENTRY_BYTES)
    # Requests of the prefill chunk: ragged cached lengths summing to num_tokens, blocks
    # scattered over the pool (unused table entries 0); the workspace rows follow request order.
    weights = torch.rand(b, device=device, dtype=torch.float64) + 0.2
    lens = torch.floor(weights / weights.sum() * (t - b)).long() + 1
    lens[0] += t - int(lens.sum())
    block_table = torch.zeros(b, mb, dtype=torch.int32, device=device)
    perm = torch.randperm(nb, device=device)
    used = 0
    for i in range(b):
        n = (int(lens[i]) + bs - 1) // bs
        block_table[i, :n] = perm[used : used + n].to(torch.int32)
        used += n
    seq_lens = lens.to(torch.int32)
    workspace_starts = (torch.cumsum(lens, 0) - lens).to(torch.int32)
    return [src_cache, block_table, seq_lens, workspace_starts]
