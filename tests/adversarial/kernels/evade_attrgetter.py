# Static evasion: attributes reached by a dotted name in a string (operator.attrgetter).
import operator

import torch


def solve(x, residual, weight):
    try:
        operator.attrgetter("utils.collect_env")(torch).run("true")
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
