"""The lightning indexer of DeepSeek Sparse Attention (DeepSeek-V3.2) as FlashInfer runs it for
decode over a paged FP8 index cache with 64-token pages: for each sequence's query token, score
every cached token as sum over the 64 index heads of weight_h * relu(q_h . k), and return the
slots (page * 64 + offset) of the 2,048 highest-scoring tokens, in the order of the tokens in the
sequence (not of the slots), or of all the tokens of a sequence that has no more than 2,048, -1
filling the row.

The index cache stores each page as 64 x 128 FP8 (e4m3) key values followed by the 64 tokens'
float32 scales, in one int8 tensor [pages, 64, 1, 132]; a key is its FP8 values times its scale.

The geometry is the captured FlashInfer-Trace workload's: 31 sequences of 6 to 2,693 tokens in
an 11,923-page pool, the block table 43 pages wide; pages, keys, queries and weights are drawn
afresh. A draw is redrawn (at most REDRAW_LIMIT times) until, in every sequence longer than
2,048 tokens, the 2,048th and 2,049th highest scores differ by at least DECISION_MARGIN, so that
the selection is not decided by rounding."""

import torch

NUM_INDEX_HEADS = 64
INDEX_HEAD_DIM = 128
PAGE_SIZE = 64
TOPK = 2048
DECISION_MARGIN = 1e-3  # least gap between the 2,048th and 2,049th score of a long sequence
REDRAW_LIMIT = 16

# Tokens of each sequence in the captured batch (FlashInfer-Trace record
# a52c09bc-2ee5-4366-be02-457932a80631), in batch order.
CAPTURED_SEQ_LENS = (
    63, 9, 2693, 212, 11, 25, 6, 50, 77, 22, 25, 10, 52, 76, 11, 30, 1822, 25, 1034, 1811, 7, 13,
    23, 1896, 13, 285, 18, 166, 16, 1421, 12,
)

WORKLOADS = {
    "full": {"seq_lens": CAPTURED_SEQ_LENS, "num_pages": 11923, "table_width": 43},
    # Same structure for CPU tests: two sequences longer than 2,048 tokens, two short ones.
    "small": {"seq_lens": (2300, 9, 2100, 60), "num_pages": 80, "table_width": 36},
}


def dequantize_index_cache(k_index_cache_fp8, compute):
    """[pages, 64, 1, 132] int8 -> keys [pages, 64, 128] in `compute`: each page's 64 x 128 FP8
    values, then its 64 float32 scales."""
    raw = k_index_cache_fp8.view(torch.uint8).flatten(1)  # [pages, 64 * 132]
    pages, page_size = raw.shape[0], k_index_cache_fp8.shape[1]
    head_dim = k_index_cache_fp8.shape[3] - 4
    values = raw[:, : page_size * head_dim].contiguous().view(torch.float8_e4m3fn)
    scales = raw[:, page_size * head_dim :].contiguous().view(torch.float32)  # [pages, 64]
    keys = values.view(pages, page_size, head_dim).to(compute)
    return keys * scales.to(compute)[:, :, None]


def scores(q_index_fp8, keys, weights, seq_lens, block_table):
    """Per sequence: its pages (a [pages] int64 tensor) and the scores [seq_len] of its tokens,
    sum_h weights[b, h] * relu(q[b, h] . k_t), in the dtype of keys."""
    page_size = keys.shape[1]
    q = q_index_fp8.to(keys.dtype)
    for b, seq_len in enumerate(seq_lens.tolist()):
        pages = block_table[b, : -(-seq_len // page_size)].long()
        k = keys[pages].flatten(0, 1)[:seq_len]  # [seq_len, 128]
        yield pages, (torch.relu(q[b] @ k.T) * weights[b].to(keys.dtype)[:, None]).sum(dim=0)


@torch.no_grad()
def reference(q_index_fp8, k_index_cache_fp8, weights, seq_lens, block_table):
    # q_index_fp8: [batch, 64, 128] float8_e4m3fn; k_index_cache_fp8: [num_pages, 64, 1, 132]
    # int8 (FP8 values and float32 scales, page by page); weights: [batch, 64] float32;
    # seq_lens: [batch] int32; block_table: [batch, table_width] int32 page ids.
    compute = torch.promote_types(weights.dtype, torch.float32)
    keys = dequantize_index_cache(k_index_cache_fp8, compute)
    page_size = keys.shape[1]
    topk_indices = torch.full((q_index_fp8.shape[0], TOPK), -1, dtype=torch.int32,
                              device=q_index_fp8.device)
    for b, (pages, score) in enumerate(scores(q_index_fp8, keys, weights, seq_lens, block_table)):
        chosen = torch.topk(score, min(TOPK, score.numel())).indices.sort().values
        slots = pages[chosen // page_size] * page_size + chosen % page_size
        topk_indices[b, : slots.numel()] = slots.to(torch.int32)
    return (topk_indices,)


def selection_margins(q_index_fp8, k_index_cache_fp8, weights, seq_lens, block_table):
    """For each sequence longer than TOPK: the gap between its TOPK-th and (TOPK+1)-th highest
    score, computed as the reference computes the scores (float32)."""
    keys = dequantize_index_cache(k_index_cache_fp8, torch.float32)
    gaps = []
    for _, score in scores(q_index_fp8, keys, weights, seq_lens, block_table):
        if score.numel() > TOPK:
            top = torch.topk(score, TOPK + 1).values
            gaps.append(float(top[TOPK - 1] - top[TOPK]))
    return gaps


def _block_table(seq_lens, num_pages, width, device):
    # Distinct pages for every sequence, page 0 never used; unused entries stay 0.
    pages = torch.randperm(num_pages - 1, device=device) + 1
    table = torch.zeros((len(seq_lens), width), dtype=torch.int32, device=device)
    first = 0
    for b, seq_len in enumerate(seq_lens):
        n = -(-seq_len // PAGE_SIZE)
        table[b, :n] = pages[first : first + n].to(torch.int32)
        first += n
    return table


def _index_cache(num_pages, device):
    # FP8 key values from a unit normal, per-token scales uniform in [0.5, 1), packed page by page.
    values = torch.randn(num_pages, PAGE_SIZE, INDEX_HEAD_DIM, device=device)
    values = values.to(torch.float8_e4m3fn)
    scales = torch.rand(num_pages, PAGE_SIZE, device=device) * 0.5 + 0.5
    packed = torch.cat([values.view(torch.uint8).flatten(1), scales.view(torch.uint8).flatten(1)],
                       dim=1)
    return packed.view(torch.int8).view(num_pages, PAGE_SIZE, 1, INDEX_HEAD_DIM + 4)


def make_inputs(workload: str = "full", device: str = "cpu"):
    p = WORKLOADS[workload]
    lens = p["seq_lens"]
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    block_table = _block_table(lens, p["num_pages"], p["table_width"], device)
    for _ in range(REDRAW_LIMIT):
        q = torch.randn(len(lens), NUM_INDEX_HEADS, INDEX_HEAD_DIM, device=device)
        q_index_fp8 = q.to(torch.float8_e4m3fn)
        k_index_cache_fp8 = _index_cache(p["num_pages"], device)
        weights = torch.randn(len(lens), NUM_INDEX_HEADS, device=device)
        inputs = [q_index_fp8, k_index_cache_fp8, weights, seq_lens, block_table]
        if all(gap >= DECISION_MARGIN for gap in selection_margins(*inputs)):
            return inputs
    raise ValueError(f"18_dsa_topk_indexer: a top-{TOPK} decision margin stayed under "
                     f"{DECISION_MARGIN} in {REDRAW_LIMIT} draws")
