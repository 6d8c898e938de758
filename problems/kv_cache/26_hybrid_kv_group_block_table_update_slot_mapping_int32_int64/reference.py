"""vLLM's GPU block tables for a hybrid model with three KV-cache groups (BlockTables in the v1
GPU worker, as its staged-writes test poses it): the scheduler's staged block-id writes are
applied to each group's block table in order, then every scheduled token's cache slot is
computed in each group.

Per group g, its scheduler block size BLOCK_SIZES[g] is a multiple of the attention kernel's
block size KERNEL_BLOCK_SIZES[g]; a scheduler block id b expands into the kernel block ids
b * e .. b * e + e - 1 (e the ratio). Write w appends (or, with overwrite[w], writes from the
start) the expanded ids of its first staged_counts[g, w] staged ids to the table row of request
write_requests[w], and the row's block count becomes where the write ended. Writes run in order:
a later write to the same request starts where the earlier one stopped.

Then for batch entry i (request idx_mapping[i], tokens query_start_loc[i] .. [i + 1]) each token
at position p gets slot table[request, p // kb] * kb + p % kb in every group (kb its kernel
block size); tokens after the last request's end get -1."""

import torch

BLOCK_SIZES = (16, 32, 8)
KERNEL_BLOCK_SIZES = (16, 16, 8)
STAGE_CAPACITY = 4
PAD_SLOT = -1
MAX_BLOCK_ID = 2048  # block ids are drawn below this

WORKLOADS = {
    # 64 request rows, 4,096 token slots, tables of 512 / 1,024 / 512 kernel blocks, two staged
    # writes per request.
    "full": {"max_num_reqs": 64, "max_num_batched_tokens": 4096, "table_widths": (512, 1024, 512)},
    "small": {"max_num_reqs": 4, "max_num_batched_tokens": 64, "table_widths": (8, 16, 8)},
}


def _apply_writes(table, counts, group, write_requests, overwrite, staged_ids, staged_counts):
    expansion = BLOCK_SIZES[group] // KERNEL_BLOCK_SIZES[group]
    steps = torch.arange(expansion, device=table.device)
    requests, rewrite, n_staged = write_requests.tolist(), overwrite.tolist(), staged_counts[group].tolist()
    row_counts = counts[group].tolist()
    for w, request in enumerate(requests):
        ids = (staged_ids[group, w, : n_staged[w]].long()[:, None] * expansion + steps).reshape(-1)
        start = 0 if rewrite[w] else row_counts[request]
        table[request, start : start + ids.numel()] = ids.to(table.dtype)
        row_counts[request] = start + ids.numel()
    counts[group] = torch.tensor(row_counts, dtype=counts.dtype, device=counts.device)


@torch.no_grad()
def reference(block_table_0, block_table_1, block_table_2, num_blocks, write_requests, overwrite,
              staged_ids, staged_counts, idx_mapping, query_start_loc, positions):
    # block_table_g: [requests, width_g] int32 and num_blocks: [3, requests] int32, updated in
    # place and returned; staged_ids: [3, writes, 4] int32; staged_counts: [3, writes] int32;
    # write_requests: [writes] int32; overwrite: [writes] bool; idx_mapping: [batch] int32;
    # query_start_loc: [batch + 1] int32; positions: [tokens] int64.
    tables = (block_table_0, block_table_1, block_table_2)
    for group, table in enumerate(tables):
        _apply_writes(table, num_blocks, group, write_requests, overwrite, staged_ids, staged_counts)
    # Every scheduled token's request; tokens after the last boundary stay padding.
    lengths = query_start_loc[1:].long() - query_start_loc[:-1].long()
    scheduled = int(query_start_loc[-1])
    request = torch.repeat_interleave(idx_mapping.long(), lengths)
    token_positions = positions[:scheduled].long()
    slot_mapping = torch.full((len(tables), positions.numel()), PAD_SLOT, dtype=torch.int64, device=positions.device)
    for group, table in enumerate(tables):
        kb = KERNEL_BLOCK_SIZES[group]
        blocks = table[request, token_positions // kb].long()
        slot_mapping[group, :scheduled] = blocks * kb + token_positions % kb
    return block_table_0, block_table_1, block_table_2, num_blocks, slot_mapping


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    reqs, tokens = p["max_num_reqs"], p["max_num_batched_tokens"]
    writes = 2 * reqs
    tables = [torch.randint(0, MAX_BLOCK_ID, (reqs, width), device=device, dtype=torch.int32)
              for width in p["table_widths"]]
    num_blocks = torch.zeros(3, reqs, dtype=torch.int32, device=device)
    # Every request is written twice, in two independent orders.
    write_requests = torch.cat([torch.randperm(reqs, device=device), torch.randperm(reqs, device=device)])
    write_requests = write_requests.to(torch.int32)
    overwrite = torch.randint(0, 2, (writes,), device=device, dtype=torch.bool)
    staged_counts = torch.randint(0, STAGE_CAPACITY + 1, (3, writes), device=device, dtype=torch.int32)
    # Staged ids beyond a write's count are -1 (never read).
    candidates = torch.randint(0, MAX_BLOCK_ID, (3, writes, STAGE_CAPACITY), device=device, dtype=torch.int32)
    filled = torch.arange(STAGE_CAPACITY, device=device)[None, None, :] < staged_counts[:, :, None]
    staged_ids = torch.where(filled, candidates, torch.full_like(candidates, -1))
    # The batch: every request once, in a random order, with 0 .. tokens / reqs tokens each.
    idx_mapping = torch.randperm(reqs, device=device).to(torch.int32)
    lengths = torch.randint(0, tokens // reqs + 1, (reqs,), device=device)
    boundaries = lengths.cumsum(0).clamp(max=tokens)
    query_start_loc = torch.cat([boundaries.new_zeros(1), boundaries]).to(torch.int32)
    # Positions stay within what two staged writes of 4 blocks cover in the smallest group.
    max_position = writes // reqs * STAGE_CAPACITY * min(BLOCK_SIZES)
    positions = torch.randint(0, max_position, (tokens,), device=device, dtype=torch.int64)
    return [*tables, num_blocks, write_requests, overwrite, staged_ids, staged_counts, idx_mapping,
            query_start_loc, positions]
