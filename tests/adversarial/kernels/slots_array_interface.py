# Attack (red team, thirteenth session, round 2): the array-interface window through a slot.
# lazy_property, under a function renamed to __annotations__, rewrites a class's annotations with
# one under the protocol's name; dataclass(slots=True) makes it a slot, a C member descriptor,
# which the first version of the check trusted; passed strict. Now refused statically (the
# rename, lazy_property) and at run time (a member descriptor answers whatever its slot holds:
# runtime.native_code).
import dataclasses
import typing

import numpy as np
import torch
from torch.distributions.utils import lazy_property

_NAME = "".join(map(chr, [95, 95, 97, 114, 114, 97, 121, 95, 105, 110, 116, 101, 114, 102, 97, 99, 101, 95, 95]))


class Spec:
    tag: int


_ANN = "".join(map(chr, [95, 95, 97, 110, 110, 111, 116, 97, 116, 105, 111, 110, 115, 95, 95]))


def _fields(owner):
    return {"tag": int, _NAME: dict}


_fields.__name__ = _ANN
lazy_property(_fields).__get__(Spec)  # Spec's annotations replaced, one under the protocol's name
Slotted = dataclasses.dataclass(slots=True)(Spec)


def _window(addr, n):
    spec = {"shape": (n,), "typestr": "|u1", "data": (addr, False), "version": 3}
    return np.asarray(Slotted(0, spec))


def solve(x, residual, weight):
    victim = bytes(b"DDDDDDDDDDDDDDDD")
    w = _window(id(victim), 48)
    w[32] = 69
    if victim[0] != 69:
        raise RuntimeError("no write")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
