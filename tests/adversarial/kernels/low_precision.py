# Right algorithm, output rounded through fp8: far outside the bf16 allowance.
import torch


def solve(hidden_states, residual, weight):
    s = hidden_states.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(torch.float8_e4m3fn).to(hidden_states.dtype)
