# Right algorithm, outputs rounded through fp8: far outside the bf16 allowance.
import torch


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(torch.float8_e4m3fn).to(x.dtype)
    return out, s.to(torch.float8_e4m3fn).to(residual.dtype)
