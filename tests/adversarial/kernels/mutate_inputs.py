# Right outputs, but scribbles over an input afterwards.
import torch


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
    x.mul_(2)
    return out
