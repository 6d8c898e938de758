# Honest RMSNorm (problem 36, CPU) computed in float64 with numpy.
import numpy as np
import torch


def solve(hidden_states, weight):
    x = hidden_states.float().numpy().astype(np.float64)
    w = weight.float().numpy().astype(np.float64)
    out = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * w
    return torch.from_numpy(out).to(hidden_states.dtype)
