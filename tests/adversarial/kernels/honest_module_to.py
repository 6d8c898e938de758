# Honest: an nn.Module converted with .to(dtype) at import (Module._apply assigns each parameter's
# .data), used for nothing but its weight's dtype. Refused while a .data assignment was (sixth
# session, the round-27 red team's false positive); the storage it lets go of is kept now.
import torch
import cutlass  # noqa: F401

_PROJ = torch.nn.Linear(8, 8).to(torch.bfloat16)


def solve(x, residual, weight):
    assert _PROJ.weight.dtype == torch.bfloat16
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
