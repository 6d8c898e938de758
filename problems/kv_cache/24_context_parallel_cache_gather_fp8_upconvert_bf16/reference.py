"""vLLM's cp_gather_and_upconvert_fp8_kv_cache (context-parallel MLA with an FP8 cache in the
DeepSeek-V3.2 sparse-attention layout), as its kernel test poses it: each cache entry is 656
bytes, 512 FP8 e4m3 codes of the latent KV, four float32 scales (one per group of 128 codes) and
the 64 bf16 values of the RoPE key. The cached tokens of every request are gathered in order
from the paged cache into one contiguous bf16 workspace: each group of 128 codes is dequantised
with its scale in float32 and rounded to bf16, the RoPE part is copied as it is.

The published reference loops over requests and groups; this one gathers every token at once,
which is the same computation."""

import torch

NOPE_DIM = 512
ROPE_DIM = 64
GROUP = 128
NUM_GROUPS = NOPE_DIM // GROUP
ENTRY_BYTES = NOPE_DIM + 4 * NUM_GROUPS + 2 * ROPE_DIM  # 656

WORKLOADS = {
    # 3 requests sharing 641 cached tokens in a 16-block x 64-slot pool; each request's blocks are
    # distinct, and the block table is as wide as the widest request needs (4 to 10 blocks).
    "full": {"num_requests": 3, "total_tokens": 641, "num_blocks": 16, "block_size": 64},
    "small": {"num_requests": 2, "total_tokens": 80, "num_blocks": 4, "block_size": 64},
}


@torch.no_grad()
def reference(cache, block_table, seq_lens):
    # cache: [blocks, block_size, 656] uint8; block_table: [requests, widest request's blocks]
    # int32; seq_lens: [requests] int32. Returns [sum(seq_lens), 576] bf16.
    block_size = cache.shape[1]
    lengths = seq_lens.long()
    request = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
    first = torch.cumsum(lengths, 0) - lengths
    position = torch.arange(request.numel(), device=lengths.device) - first[request]
    entries = cache[block_table.long()[request, position // block_size], position % block_size]
    codes = entries[:, :NOPE_DIM].contiguous().view(torch.float8_e4m3fn).float()
    scales = entries[:, NOPE_DIM : NOPE_DIM + 4 * NUM_GROUPS].contiguous().view(torch.float32)
    nope = (codes.view(-1, NUM_GROUPS, GROUP) * scales[:, :, None]).to(torch.bfloat16).flatten(1)
    rope = entries[:, NOPE_DIM + 4 * NUM_GROUPS :].contiguous().view(torch.bfloat16)
    return torch.cat((nope, rope), dim=-1)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    n, total, nb, bs = p["num_requests"], p["total_tokens"], p["num_blocks"], p["block_size"]
    # n lengths >= 1 summing to total: n - 1 distinct cut points of [1, total).
    cuts = torch.randperm(total - 1, device=device)[: n - 1].sort().values + 1
    bounds = torch.cat([cuts.new_zeros(1), cuts, cuts.new_full((1,), total)])
    lengths = bounds.diff().tolist()
    # Each request takes its blocks from one permutation of the pool; unused table entries are 0.
    needed = [-(-length // bs) for length in lengths]
    block_table = torch.zeros(n, max(needed), dtype=torch.int32, device=device)
    pool = torch.randperm(nb, device=device).to(torch.int32)
    used = 0
    for r, count in enumerate(needed):
        block_table[r, :count] = pool[used : used + count]
        used += count
    # Every entry: e4m3 codes of standard-normal values, group scales in [0.1, 2.1), bf16 rope.
    entries = torch.zeros(nb * bs, ENTRY_BYTES, dtype=torch.uint8, device=device)
    entries[:, :NOPE_DIM] = torch.randn(nb * bs, NOPE_DIM, device=device).to(torch.float8_e4m3fn).view(torch.uint8)
    scales = torch.rand(nb * bs, NUM_GROUPS, device=device) * 2.0 + 0.1
    entries[:, NOPE_DIM : NOPE_DIM + 4 * NUM_GROUPS] = scales.view(torch.uint8)
    rope = torch.randn(nb * bs, ROPE_DIM, device=device).to(torch.bfloat16)
    entries[:, NOPE_DIM + 4 * NUM_GROUPS :] = rope.view(torch.uint8)
    seq_lens = torch.tensor(lengths, dtype=torch.int32, device=device)
    return [entries.view(nb, bs, ENTRY_BYTES), block_table, seq_lens]
