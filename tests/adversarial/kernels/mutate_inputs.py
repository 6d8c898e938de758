# Right output, but scribbles over an input afterwards.
import torch


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(hidden_states.dtype)
    hidden_states.mul_(2)
    return out
