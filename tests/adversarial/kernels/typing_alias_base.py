# typing's aliases derive from collections.abc's classes (typing.Sequence's __mro_entries__ gives
# collections.abc.Sequence), whose inherited methods call what the subclass defines: a route around
# the refusal of collections.abc bases (tenth session's second red team, 2026-12-07). Refused
# statically: only typing.NamedTuple and typing.Generic are derivable of typing's.
import typing

import torch


class _S(typing.Sequence):
    pass


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
