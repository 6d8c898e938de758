# Attack: Enum's __hash__ is `hash(self._name_)`, written in Python. A property bound on the
# kernel's Enum class after the class exists (enum's own class body refuses the name) answers
# `_name_`, so the kernel's code runs inside any hash of a member, including one made by C code
# that holds what it passes borrowed. Refused statically: kernel.py binds no _sunder_ name.
import enum

import torch


class Mode(enum.Enum):
    FUSED = 1


def _name(self):
    return "FUSED"


Mode._name_ = property(_name)
_plans = {Mode.FUSED: 1e-5}


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + _plans[Mode.FUSED])
    return (s * inv * weight.float()).to(x.dtype)
