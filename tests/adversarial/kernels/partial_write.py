# Allocates its output uninitialised and writes only the first half of the rows.
import torch


def solve(hidden_states, residual, weight):
    out = torch.empty_like(hidden_states)
    half = hidden_states.shape[0] // 2
    s = hidden_states[:half].float() + residual[:half].float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out[:half] = (s * inv * weight.float()).to(hidden_states.dtype)
    return out
