# Static evasion: a module held as a class attribute and reached through the instance; torch.fx
# generates Python source and executes it for the kernel.
import torch


class _Tools:
    fx = torch.fx


def _double(t):
    return t + t


def solve(x, residual, weight):
    traced = _Tools().fx.symbolic_trace(_double)
    s = traced(x.float()) * 0.5 + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
