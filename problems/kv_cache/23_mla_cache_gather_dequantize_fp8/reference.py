"""vLLM's gather_and_maybe_dequant_cache for an MLA model with an FP8 cache, as its kernel test
poses it: the cached tokens of every request are gathered in order from a paged compressed cache
(576-wide entries: kv_lora 512 + rope 64, FP8 e4m3 codes stored as uint8) into one contiguous
float32 workspace, the requests one after another, and dequantised with the per-tensor scale:
out = float32(fp8 value) * scale.

The published reference loops over requests; this one gathers every token at once, which is the
same computation (each row is one code times the scale, in float32)."""

import torch

ENTRY = 576  # kv_lora_rank 512 + rope dim 64
SCALE = 0.1  # the per-tensor scale, passed as a Python float

WORKLOADS = {
    # 8 requests sharing 4,096 cached tokens; a 1,024-block x 16-slot pool; every request's block
    # table row is a permutation of the whole pool.
    "full": {"num_requests": 8, "total_tokens": 4096, "num_blocks": 1024, "block_size": 16},
    "small": {"num_requests": 3, "total_tokens": 64, "num_blocks": 16, "block_size": 16},
}


@torch.no_grad()
def reference(src_cache, block_table, seq_lens, scale):
    # src_cache: [blocks, block_size, 576] uint8 (e4m3 codes); block_table: [requests, blocks]
    # int32; seq_lens: [requests] int32; scale: float. Returns [sum(seq_lens), 576] float32.
    block_size = src_cache.shape[1]
    lengths = seq_lens.long()
    request = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
    first = torch.cumsum(lengths, 0) - lengths  # each request's first row in the output
    position = torch.arange(request.numel(), device=lengths.device) - first[request]
    blocks = block_table.long()[request, position // block_size]
    codes = src_cache[blocks, position % block_size].view(torch.float8_e4m3fn)
    return codes.float() * scale


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, total, nb, bs = p["num_requests"], p["total_tokens"], p["num_blocks"], p["block_size"]
    # Codes of a standard-normal cache quantised with the scale (float16 values / 0.1, clamped to
    # the e4m3 range).
    values = torch.randn(nb, bs, ENTRY, device=device).to(torch.float16)
    src_cache = (values / SCALE).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(torch.uint8)
    block_table = torch.stack([torch.randperm(nb, device=device) for _ in range(n)]).to(torch.int32)
    # n lengths >= 1 summing to total: n - 1 distinct cut points of [1, total).
    cuts = torch.randperm(total - 1, device=device)[: n - 1].sort().values + 1
    bounds = torch.cat([cuts.new_zeros(1), cuts, cuts.new_full((1,), total)])
    seq_lens = bounds.diff().to(torch.int32)
    return [src_cache, block_table, seq_lens, SCALE]
