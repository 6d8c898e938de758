# Static evasion: exec bound to another name and called through it.
import torch

_run = exec


def solve(x, residual, weight):
    try:
        _run("import os")
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
