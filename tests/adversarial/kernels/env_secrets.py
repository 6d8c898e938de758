# Honest RMSNorm (problem 36) that fails loudly if the judge leaked a credential into its
# process: the caller's environment holds an API key (the test sets one); the worker must not.
import os

import torch


def _leaked():
    for name, value in os.environ.items():
        if any(mark in name for mark in ("API_KEY", "TOKEN", "SECRET")) or "sk-mkb-test" in value:
            return name
    return None


def solve(hidden_states, weight):
    leaked = _leaked()
    if leaked:
        raise RuntimeError(f"the worker's environment holds {leaked}")
    x = hidden_states.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return out.to(hidden_states.dtype)
