"""DeepSeek Sparse Attention (DeepSeek-V3.2 at tensor parallelism 8) as FlashInfer runs it over a
paged MLA cache with 64-token pages: each query token attends only to the (up to) 2,048 cached
tokens its indexer selected, given as global token slots (page * 64 + offset), -1 padding the
rest. The cache holds, per token, the 512-dimensional compressed KV latent (ckv, both key and
value) and the 64-dimensional RoPE part of the key (kpe); the 16 heads' queries come as their
latent part q_nope and RoPE part q_pe (weights absorbed). Returns the attention output in the
latent space and the base-2 log-sum-exp of the scaled logits.

The selection geometry is the captured FlashInfer-Trace workload's: 62 query tokens selecting
2 to 2,048 tokens each (11,837 in all), one of them picking 2,048 of its 2,161-token context in
the captured pattern of runs; the others select their whole (short) context. Each token's
context lies in pages of a 6,465-page pool drawn afresh; every row lists its slots in ascending
order."""

import math

import torch

NUM_QO_HEADS = 16
HEAD_DIM_CKV = 512
HEAD_DIM_KPE = 64
PAGE_SIZE = 64
TOPK = 2048
# The captured softmax scale: DeepSeek-V3.2's 1/sqrt(192) times its YaRN mscale squared,
# (0.1 ln 40 + 1)^2, passed as a Python float.
SM_SCALE = 0.1352337788608801

# Tokens each query token selects, in order (FlashInfer-Trace record
# 0f8137e0c871466f8b4bdce5bfd57658). All but the long row select their whole context.
CAPTURED_SELECT_LENS = (
    18, 11, 2048, 20, 25, 45, 135, 7, 8, 10, 22, 17, 11, 30, 130, 9, 600, 255, 1033, 1010, 58, 2,
    21, 954, 7, 14, 1015, 28, 64, 5, 18, 33, 26, 86, 5, 14, 10, 90, 53, 22, 2, 17, 154, 51, 121,
    25, 16, 5, 19, 12, 44, 124, 33, 1157, 9, 5, 1319, 300, 23, 35, 389, 8,
)
# The long row's selection: 2,048 of its 2,161 context positions, as (first position, count) runs.
CAPTURED_LONG_RUNS = (
    (0, 53), (54, 10), (65, 25), (91, 11), (103, 42), (146, 12), (159, 65), (225, 7), (233, 3),
    (237, 40), (278, 1), (280, 12), (293, 13), (307, 8), (316, 1), (318, 5), (324, 4), (329, 3),
    (333, 3), (337, 21), (359, 14), (374, 1), (377, 1), (379, 24), (404, 110), (515, 13),
    (529, 20), (550, 6), (557, 41), (599, 16), (616, 14), (631, 15), (647, 10), (658, 6),
    (665, 24), (691, 11), (703, 15), (719, 10), (730, 21), (752, 21), (774, 26), (801, 28),
    (830, 7), (838, 11), (850, 1), (852, 12), (865, 18), (884, 5), (890, 1), (892, 1), (894, 9),
    (904, 11), (916, 10), (927, 12), (940, 4), (946, 23), (970, 7), (978, 6), (985, 29),
    (1015, 5), (1021, 22), (1045, 13), (1059, 37), (1097, 10), (1108, 42), (1151, 1), (1153, 30),
    (1184, 2), (1187, 31), (1219, 33), (1253, 8), (1262, 102), (1366, 54), (1421, 98), (1520, 19),
    (1540, 23), (1564, 7), (1572, 31), (1604, 35), (1640, 21), (1662, 4), (1668, 10), (1681, 4),
    (1688, 15), (1706, 4), (1711, 13), (1725, 3), (1729, 1), (1731, 3), (1736, 12), (1749, 47),
    (1798, 70), (1869, 108), (1978, 2), (1981, 9), (1992, 6), (1999, 31), (2031, 24), (2056, 105),
)

WORKLOADS = {
    "full": {"select_lens": CAPTURED_SELECT_LENS, "long_row": 2, "long_context": 2161,
             "long_runs": CAPTURED_LONG_RUNS, "num_pages": 6465},
    # Same structure for CPU tests: a long row choosing 2,048 of 2,100 positions in three runs.
    "small": {"select_lens": (5, 2048, 30, 1), "long_row": 1, "long_context": 2100,
              "long_runs": ((0, 1000), (1010, 500), (1530, 548)), "num_pages": 60},
}


@torch.no_grad()
def reference(q_nope, q_pe, ckv_cache, kpe_cache, sparse_indices, sm_scale):
    # q_nope: [tokens, 16, 512]; q_pe: [tokens, 16, 64]; ckv_cache: [num_pages, 64, 512];
    # kpe_cache: [num_pages, 64, 64]; sparse_indices: [tokens, 2048] int32 global token slots
    # (page * 64 + offset), -1 for none; sm_scale: float.
    compute = torch.promote_types(q_nope.dtype, torch.float32)
    ckv_all = ckv_cache.flatten(0, 1)  # [num_pages * 64, 512]
    kpe_all = kpe_cache.flatten(0, 1)
    unused = sparse_indices < 0
    slots = sparse_indices.masked_fill(unused, 0).long()
    ckv = ckv_all[slots].to(compute)  # [tokens, 2048, 512]
    kpe = kpe_all[slots].to(compute)
    logits = q_nope.to(compute) @ ckv.transpose(1, 2) + q_pe.to(compute) @ kpe.transpose(1, 2)
    logits = logits * sm_scale  # [tokens, 16, 2048]
    logits.masked_fill_(unused[:, None, :], float("-inf"))
    lse = torch.logsumexp(logits, dim=-1) / math.log(2.0)
    out = (torch.softmax(logits, dim=-1) @ ckv).to(q_nope.dtype)
    return out, lse


def _sparse_indices(p, device):
    """Each row's selected slots in ascending order, over pages of the pool drawn afresh."""
    lens, long_row = p["select_lens"], p["long_row"]
    contexts = [p["long_context"] if b == long_row else n for b, n in enumerate(lens)]
    pages_per_row = [-(-n // PAGE_SIZE) for n in contexts]
    pages = torch.randperm(p["num_pages"], device=device)[: sum(pages_per_row)]
    indices = torch.full((len(lens), TOPK), -1, dtype=torch.int32, device=device)
    first = 0
    for b, n in enumerate(lens):
        row_pages = pages[first : first + pages_per_row[b]]
        first += pages_per_row[b]
        if b == long_row:
            runs = p["long_runs"]
            positions = torch.cat([torch.arange(s, s + k, device=device) for s, k in runs])
        else:
            positions = torch.arange(n, device=device)
        slots = row_pages[positions // PAGE_SIZE] * PAGE_SIZE + positions % PAGE_SIZE
        indices[b, :n] = torch.sort(slots).values.to(torch.int32)
    return indices


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    tokens, num_pages, bf16 = len(p["select_lens"]), p["num_pages"], torch.bfloat16
    q_nope = torch.randn(tokens, NUM_QO_HEADS, HEAD_DIM_CKV, device=device, dtype=bf16)
    q_pe = torch.randn(tokens, NUM_QO_HEADS, HEAD_DIM_KPE, device=device, dtype=bf16)
    ckv_cache = torch.randn(num_pages, PAGE_SIZE, HEAD_DIM_CKV, device=device, dtype=bf16)
    kpe_cache = torch.randn(num_pages, PAGE_SIZE, HEAD_DIM_KPE, device=device, dtype=bf16)
    return [q_nope, q_pe, ckv_cache, kpe_cache, _sparse_indices(p, device), SM_SCALE]
