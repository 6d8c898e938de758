# An honest kernel that defines a namedtuple, a dataclass, an enum and a typed NamedTuple at
# import (each reads its caller's module name through sys._getframe from its own line) and uses
# them in solve: the standard library's frame readers stay trusted where they read a name.
import collections
import dataclasses
import enum
import typing

import torch

Shape = collections.namedtuple("Shape", ["tokens", "hidden"])


class Mode(enum.Enum):
    FUSED = 1


class Eps(typing.NamedTuple):
    value: float = 1e-5


@dataclasses.dataclass(frozen=True)
class Config:
    eps: float
    mode: Mode = Mode.FUSED


CONFIG = Config(eps=Eps().value)


def solve(hidden_states, residual, weight):
    shape = Shape(*hidden_states.shape)
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + CONFIG.eps)
    out = (total * inv_rms * weight.float()).to(hidden_states.dtype)
    return out.view(shape.tokens, shape.hidden)
