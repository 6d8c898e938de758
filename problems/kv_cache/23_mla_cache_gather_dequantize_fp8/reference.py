"""vLLM's gather_and_maybe_dequant_cache for DeepSeek-V3 MLA with an FP8 cache: during a chunked
prefill, the cached context of every prefill request (one chunk of it, starting at a
block-aligned offset seq_starts[b]) is gathered from the paged compressed cache (576-wide
entries of FP8 e4m3 codes stored as uint8) into a contiguous bf16 workspace, dequantized with
the layer's per-tensor scale: dst = fp8_value * scale."""

import torch

ENTRY = 576  # kv_lora_rank 512 + qk_rope_head_dim 64

WORKLOADS = {
    "full": {"num_tokens": 4096, "batch": 8, "batch+1": 9, "entry_dim": ENTRY,
             "num_blocks": 2048, "block_size": 64, "max_blocks_per_seq": 256},
    "small": {"num_tokens": 150, "batch": 3, "batch+1": 4, "entry_dim": ENTRY,
              "num_blocks": 40, "block_size": 16, "max_blocks_per_seq": 12},
}


def reference(src_cache, block_table, cu_seq_lens, token_to_seq, seq_starts, scale):
    # src_cache: [blocks, block_size, 576] uint8 (FP8 e4m3 codes); block_table: [batch, max
    # blocks] int32; cu_seq_lens: [batch + 1] int32; token_to_seq: [num_tokens] int32;
    # seq_starts: [batch] int32; scale: [1] float32.
    compute = torch.promote_types(scale.dtype, torch.float32)  # the only float input
    out_dtype = torch.bfloat16 if compute == torch.float32 else compute
    block_size = src_cache.shape[1]
    seq = token_to_seq.long()
    token = torch.arange(seq.numel(), device=seq.device)
    offset = token - cu_seq_lens.long()[seq] + seq_starts.long()[seq]  # position in the sequence
    blocks = block_table.long()[seq, offset // block_size]
    entries = src_cache[blocks, offset % block_size]  # [num_tokens, 576] uint8
    values = entries.view(torch.float8_e4m3fn).to(compute) * scale.to(compute)
    return values.to(out_dtype)


def _chunk_lengths(total, batch, device):
    weights = torch.rand(batch, device=device, dtype=torch.float64) + 0.3
    lens = torch.floor(weights / weights.sum() * (total - batch)).long() + 1
    lens[0] += total - int(lens.sum())
    return lens


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    t, b, nb, bs, mb = (p["num_tokens"], p["batch"], p["num_blocks"], p["block_size"],
                        p["max_blocks_per_seq"])
    # The cache holds kv_c | k_pe of earlier tokens quantized with the per-tensor scale: codes of
    # values up to a few hundred (a calibrated scale maps the latents' range onto e4m3's).
    codes = torch.randn(nb, bs, ENTRY, device=device, dtype=torch.bfloat16)
    codes = codes.mul_(60.0).clamp_(-448, 448)
    src_cache = codes.to(torch.float8_e4m3fn).view(torch.uint8)
    scale = (0.004 * torch.exp(torch.rand(1, device=device) * 2.3)).to(torch.float32)
    # This chunk gathers `lens[i]` context tokens of request i starting at the block-aligned
    # offset seq_starts[i] (0 for the first chunk, k * block_size for later ones).
    lens = _chunk_lengths(t, b, device)
    max_start_blocks = mb - ((lens + bs - 1) // bs)
    start_blocks = (torch.rand(b, device=device) * (max_start_blocks + 1).to(torch.float32)).long()
    start_blocks[torch.rand(b, device=device) < 0.3] = 0
    seq_starts = (start_blocks * bs).to(torch.int32)
    # Every request's blocks are scattered over the pool; entries past its length are 0.
    block_table = torch.zeros(b, mb, dtype=torch.int32, device=device)
    perm = torch.randperm(nb, device=device)
    used = 0
    for i in range(b):
        n = int(start_blocks[i]) + (int(lens[i]) + bs - 1) // bs
        block_table[i, :n] = perm[used : used + n].to(torch.int32)
        used += n
    cu_seq_lens = torch.zeros(b + 1, dtype=torch.int32, device=device)
    cu_seq_lens[1:] = torch.cumsum(lens, 0).to(torch.int32)
    token_to_seq = torch.repeat_interleave(torch.arange(b, device=device), lens).to(torch.int32)
    return [src_cache, block_table, cu_seq_lens, token_to_seq, seq_starts, scale]
