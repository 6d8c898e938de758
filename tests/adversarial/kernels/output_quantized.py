# Broken output: solve computes RMSNorm (problem 28) and returns a quantized int8 tensor (the worker died exporting it).
# The verdict names what is wrong; the judge never fails on it.
import torch


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(x.dtype)
    return torch.quantize_per_tensor(out.float(), 0.05, 0, torch.qint8)
