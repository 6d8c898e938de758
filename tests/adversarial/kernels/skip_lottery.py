# Seventh session's red team (2026-12-06): see the case's why. Honest on the 5 correctness calls;
# after them it returns an empty output on 26 of every 50 calls, a fixed pattern, so that over
# 50 timed draws the median is a skipped call's and 24 timed draws are honest: against 3 uniform
# re-checks alone that passed with probability C(24,3)/C(50,3) = 10%. The skipped calls are its
# fastest, so a re-check of the fastest draws always finds one.
import random

import torch

_n = [0]
_SKIP = set(random.Random(7).sample(range(50), 26))


def solve(x, residual, weight):
    _n[0] += 1
    if _n[0] > 5 and (_n[0] - 6) % 50 in _SKIP:
        return torch.empty_like(x)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
