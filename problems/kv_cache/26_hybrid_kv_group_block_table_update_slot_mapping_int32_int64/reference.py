"""vLLM v1 model runner's per-step block-table bookkeeping for a hybrid model with two KV-cache
groups (gpt-oss: full-attention layers and 128-token sliding-window layers, each group with its
own block table): the scheduler's new block ids of every scheduled request are appended to that
request's persistent block-table row in each group, then every scheduled token's KV-cache slot
is computed per group from its position (block_table[row, pos // block_size] * block_size +
pos % block_size), and the rest of the persistent slot-mapping buffer is padded with -1 for
CUDA graphs. Integer outputs, compared exactly."""

import torch

PAD_SLOT_ID = -1

WORKLOADS = {
    # gpt-oss-120b: 2 groups of block size 16, max_model_len 131072 (8,192 blocks per row),
    # 256 request slots, 64 scheduled requests with 2,048 tokens, an 8,192-token buffer.
    "full": {"num_groups": 2, "max_num_reqs": 256, "max_blocks_per_req": 8192,
             "num_reqs": 64, "num_reqs+1": 65, "num_tokens": 2048, "max_num_tokens": 8192,
             "max_new_blocks": 512, "num_kv_blocks": 65536, "block_size": 16,
             "sliding_window": 128, "num_decodes": 48, "num_new": 8},
    "small": {"num_groups": 2, "max_num_reqs": 16, "max_blocks_per_req": 64,
              "num_reqs": 6, "num_reqs+1": 7, "num_tokens": 40, "max_num_tokens": 64,
              "max_new_blocks": 32, "num_kv_blocks": 1024, "block_size": 16,
              "sliding_window": 32, "num_decodes": 3, "num_new": 2},
}


def reference(block_tables, num_blocks, slot_mappings, block_sizes, idx_mapping,
              new_block_counts, new_block_ids, query_start_loc, positions):
    # block_tables: [G, max_num_reqs, max_blocks] int32, num_blocks: [G, max_num_reqs] int32 and
    # slot_mappings: [G, max_num_tokens] int64 are persistent buffers, updated in place.
    # block_sizes: [G] int32; idx_mapping: [B] int32 (batch index -> request row);
    # new_block_counts: [G, B] int32; new_block_ids: [G, B, max_new] int32 (first count valid);
    # query_start_loc: [B + 1] int32; positions: [num_tokens] int64.
    device = block_tables.device
    num_groups = block_tables.shape[0]
    rows = idx_mapping.long()
    # 1. Append the new block ids after each row's current blocks, per group.
    counts = new_block_counts.long()  # [G, B]
    j = torch.arange(new_block_ids.shape[2], device=device)
    take = j[None, None, :] < counts[:, :, None]  # [G, B, max_new]
    g_idx = torch.arange(num_groups, device=device)[:, None, None].expand_as(take)
    r_idx = rows[None, :, None].expand_as(take)
    cols = num_blocks.long()[:, rows][:, :, None] + j[None, None, :]
    block_tables[g_idx[take], r_idx[take], cols[take]] = new_block_ids[take]
    num_blocks[:, rows] += new_block_counts
    # 2. Slot of every scheduled token, per group; pad the rest of the buffer.
    num_tokens = positions.shape[0]
    lens = (query_start_loc[1:] - query_start_loc[:-1]).long()
    token_rows = torch.repeat_interleave(rows, lens)  # [num_tokens]
    pos = positions.long()
    for g in range(num_groups):
        bs = int(block_sizes[g])
        blocks = block_tables[g, token_rows, pos // bs].long()
        slot_mappings[g, :num_tokens] = blocks * bs + pos % bs
    slot_mappings[:, num_tokens:] = PAD_SLOT_ID
    return block_tables, num_blocks, slot_mappings


def _split(total, parts, device):
    weights = torch.rand(parts, device=device, dtype=torch.float64) + 0.2
    lens = torch.floor(weights / weights.sum() * (total - parts)).long() + 1
    lens[0] += total - int(lens.sum())
    return lens.tolist()


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    G, R, M = p["num_groups"], p["max_num_reqs"], p["max_blocks_per_req"]
    B, T, bs, window = p["num_reqs"], p["num_tokens"], p["block_size"], p["sliding_window"]
    max_new, pool = p["max_new_blocks"], p["num_kv_blocks"]
    max_len = M * bs
    nd, nn = p["num_decodes"], p["num_new"]
    nc = B - nd - nn  # continuing prefill chunks
    # Scheduled requests: decodes (1 token), continuing prefill chunks, then new requests
    # (a block-aligned prefix-cache hit, possibly empty, plus their first chunk).
    q = [1] * nd + _split(T - nd, nc + nn, device)
    ctx = (torch.randint(1, max_len // 32, (nd,), device=device).tolist()
           + torch.randint(1, max_len // 16, (nc,), device=device).tolist()
           + (torch.randint(0, max_new // 2, (nn,), device=device) * bs).tolist())
    ctx = [min(c, max_len - n) for c, n in zip(ctx, q)]
    is_new = [False] * (nd + nc) + [True] * nn
    # Persistent state: every request row holds stale block ids past its current count.
    block_tables = torch.randint(1, pool, (G, R, M), device=device, dtype=torch.int32)
    num_blocks = torch.randint(0, M // 4, (G, R), device=device, dtype=torch.int32)
    slot_mappings = torch.randint(0, pool * bs, (G, p["max_num_tokens"]), device=device)
    idx_mapping = torch.randperm(R, device=device)[:B].to(torch.int32)
    # Fresh block ids come from the pool shared by both groups (0 is the null block).
    fresh = (torch.randperm(pool - 1, device=device) + 1).to(torch.int32)
    used = 0
    new_block_counts = torch.zeros(G, B, dtype=torch.int32, device=device)
    new_block_ids = torch.full((G, B, max_new), -1, dtype=torch.int32, device=device)
    for b in range(B):
        row = int(idx_mapping[b])
        have = 0 if is_new[b] else -(-ctx[b] // bs)  # blocks already covering the context
        need = -(-(ctx[b] + q[b]) // bs)
        num_blocks[:, row] = have
        for g in range(G):
            if have:
                block_tables[g, row, :have] = fresh[used : used + have]
                used += have
            n = need - have
            ids = fresh[used : used + n].clone()
            used += n
            if g == 1 and is_new[b]:
                # Sliding-window group: prefix blocks entirely before the first new token's
                # window are never read again and are given the null block.
                skipped = max(0, ctx[b] - window + 1) // bs
                ids[:skipped] = 0
            new_block_counts[g, b] = n
            new_block_ids[g, b, :n] = ids
    block_sizes = torch.full((G,), bs, dtype=torch.int32, device=device)
    query_start_loc = torch.zeros(B + 1, dtype=torch.int32, device=device)
    query_start_loc[1:] = torch.cumsum(torch.tensor(q, device=device), 0).to(torch.int32)
    positions = torch.cat([torch.arange(c, c + n, device=device)
                           for c, n in zip(ctx, q)]).to(torch.int64)
    return [block_tables, num_blocks, slot_mappings, block_sizes, idx_mapping,
            new_block_counts, new_block_ids, query_start_loc, positions]
