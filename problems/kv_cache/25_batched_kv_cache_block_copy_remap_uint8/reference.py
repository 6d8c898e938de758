"""vLLM's copy_blocks: after beam search or prefix forking, the scheduler asks for physical KV
blocks to be duplicated (copy-on-write). Every (src, dst) pair of block_mapping copies block src
to block dst, in the key and the value cache of every layer. The caches hold FP8 values stored
as uint8, so the copy is byte-exact."""

import torch

WORKLOADS = {
    # 8 layers of a 4,096-block pool (block 16 tokens x 8 KV heads x head 128), 1,024 pairs.
    "full": {"num_layers": 8, "num_blocks": 4096, "block_size": 16, "num_kv_heads": 8,
             "head_dim": 128, "num_pairs": 1024},
    "small": {"num_layers": 2, "num_blocks": 64, "block_size": 4, "num_kv_heads": 2,
              "head_dim": 16, "num_pairs": 12},
}


def reference(kv_cache: torch.Tensor, block_mapping: torch.Tensor):
    # kv_cache: [layers, 2 (key, value), blocks, block_size, kv_heads, head_dim] uint8, updated
    # in place. block_mapping: [pairs, 2] int64 of (src, dst); destinations are distinct and
    # never a source, so the pairs may be copied in any order.
    src = block_mapping[:, 0]
    dst = block_mapping[:, 1]
    kv_cache[:, :, dst] = kv_cache[:, :, src]
    return kv_cache


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    shape = (p["num_layers"], 2, p["num_blocks"], p["block_size"], p["num_kv_heads"], p["head_dim"])
    # Every byte pattern is a valid FP8 e4m3 code except NaN's; draw the codes of N(0, 1) values.
    values = torch.randn(shape, device=device, dtype=torch.float32).clamp_(-448, 448)
    kv_cache = values.to(torch.float8_e4m3fn).view(torch.uint8)
    # Sources and destinations: disjoint random blocks; a few sources repeat (a block forked
    # into several beams), which a kernel must handle.
    n = p["num_pairs"]
    perm = torch.randperm(p["num_blocks"], device=device)
    dst = perm[:n]
    distinct_src = perm[n : n + (3 * n) // 4]
    src = distinct_src[torch.randint(0, distinct_src.numel(), (n,), device=device)]
    block_mapping = torch.stack([src, dst], dim=1).to(torch.int64)
    return [kv_cache, block_mapping]
