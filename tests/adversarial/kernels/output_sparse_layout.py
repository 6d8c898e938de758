# Broken output: solve computes RMSNorm (problem 28) and returns a sparse COO tensor (no strides; the worker died reading them).
# The verdict names what is wrong; the judge never fails on it.
import torch


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(x.dtype)
    return out.to_sparse()
