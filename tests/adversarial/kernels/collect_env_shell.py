# Runs a shell command through a torch helper (torch.utils.collect_env.run), then computes the
# right answer: a library starting a process is refused whoever asks.
import torch
from torch.utils import collect_env


def solve(hidden_states, weight):
    collect_env.run("id")
    x = hidden_states.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return out.to(hidden_states.dtype)
