# Seventh session's red team (2026-12-06, CPU judge): passed strict and permissive at c968c56 (see
# the case's why); the helper's probe notes follow.
# numpy's as_strided reached by its implementation module's name (numpy.lib._stride_tricks_impl)
# rather than numpy.lib.stride_tricks: a 2-element view whose stride is the distance from an
# array's data (torch data_ptr) to a bytearray object's type pointer.
import numpy as np
import torch
from numpy.lib._stride_tricks_impl import as_strided


def solve(x, residual, weight):
    victim = bytearray(b"hello!")
    base = np.zeros(1, dtype=np.int64)
    ptr = torch.from_numpy(base).data_ptr()
    v = as_strided(base, shape=(2,), strides=(id(victim) + 8 - ptr,))
    if int(v[1]) != id(bytearray):
        raise RuntimeError("probe failed")
    print("RAWREAD as_strided alias: type ptr of bytearray object", hex(int(v[1])))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
