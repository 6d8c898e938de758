# (Red team, 2026-12-05 night: under a 6 GiB memory limit the host was killed for memory and the
# evaluation failed as the judge's; unlimited, the host peaked at 6.7 GB against the worker's
# 2.66 GB. Each timed draw's reply is now held to the outputs' structure before anything is
# copied: a mismatch, the host never larger than the worker.)
# Blame shift: honest on the 5 correctness draws, then on timing draws returns a list of many
# aliases of one big tensor. The host opens every leaf and clones them all into its re-check
# slots (no structure check before the re-checks), so its memory grows with what the kernel
# returns; the worker only ever holds one segment of it.
import torch

_calls = [0]
_big = []
ALIASES = 8
ROWS = 16384  # 16384 x 4096 bf16 = 128 MiB


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    _calls[0] += 1
    if _calls[0] <= 5:
        return _honest(x, residual, weight)
    if not _big:
        _big.append(torch.zeros(ROWS, 4096, dtype=torch.bfloat16))
    return [_big[0]] * ALIASES
