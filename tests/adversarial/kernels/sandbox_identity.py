# Honest RMSNorm (problem 36) that fails loudly if it runs as root, has capabilities, or is not
# alone in a PID namespace of its own (there it is PID 1).
import os

import torch


def _check():
    if os.getuid() == 0 or os.geteuid() == 0:
        raise RuntimeError("the worker runs as root")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:") and int(line.split()[1], 16) != 0:
                raise RuntimeError("the worker has capabilities: " + line.strip())
    if os.getpid() != 1:
        raise RuntimeError(f"the worker is pid {os.getpid()}, not the first of a namespace of its own")


def solve(hidden_states, weight):
    _check()
    x = hidden_states.float()
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()
    return out.to(hidden_states.dtype)
