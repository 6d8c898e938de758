# Honest: GQA paged decode with base-2 LSE (problem 02), one sequence at a time.
import math

import torch


def solve(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale):
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:2], dtype=torch.float32, device=q.device)
    for b in range(q.shape[0]):
        pages = kv_indices[kv_indptr[b] : kv_indptr[b + 1]].long()
        k = k_cache[pages, 0, 0].float()
        v = v_cache[pages, 0, 0].float()
        logits = q[b].float() @ k.T * sm_scale
        lse[b] = torch.logsumexp(logits, -1) / math.log(2.0)
        out[b] = (torch.softmax(logits, -1) @ v).to(q.dtype)
    return out, lse
