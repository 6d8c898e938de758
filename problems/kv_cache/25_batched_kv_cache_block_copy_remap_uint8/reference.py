"""vLLM's block copy between two paged KV caches (swap_blocks, as its kernel test poses it): a
list of (source block, destination block) pairs is applied to the key cache and the value cache
alike, copying whole blocks of bytes from the source caches into the destination caches.
Returns the two updated destination caches."""

import torch

WORKLOADS = {
    # 1,024 blocks of 32 slots x 8 heads x 256 bytes per cache (64 MiB each); 256 pairs.
    "full": {"num_blocks": 1024, "block_size": 32, "num_heads": 8, "head_dim": 256, "num_pairs": 256},
    "small": {"num_blocks": 16, "block_size": 4, "num_heads": 2, "head_dim": 16, "num_pairs": 4},
}


@torch.no_grad()
def reference(src_k, src_v, dst_k, dst_v, block_mapping):
    # src_*, dst_*: [blocks, block_size, heads, head_dim] uint8; block_mapping: [pairs, 2] int64
    # (source, destination). dst_k and dst_v are updated in place and returned.
    sources, destinations = block_mapping[:, 0], block_mapping[:, 1]
    dst_k[destinations] = src_k[sources]
    dst_v[destinations] = src_v[sources]
    return dst_k, dst_v


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    shape = (p["num_blocks"], p["block_size"], p["num_heads"], p["head_dim"])
    src_k, src_v, dst_k, dst_v = (torch.randint(0, 256, shape, device=device, dtype=torch.uint8) for _ in range(4))
    # Sources and destinations: 2 x num_pairs distinct block ids, the first half copied onto the
    # second (each destination written once, no destination is also a source).
    chosen = torch.randperm(p["num_blocks"], device=device)[: 2 * p["num_pairs"]]
    block_mapping = torch.stack((chosen[: p["num_pairs"]], chosen[p["num_pairs"] :]), dim=1)
    return [src_k, src_v, dst_k, dst_v, block_mapping]
