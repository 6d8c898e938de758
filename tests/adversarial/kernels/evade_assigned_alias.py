# Static evasion: a module aliased by assignment, then a torch helper that runs a shell for the
# kernel (the subprocess is started by torch's frame, not kernel.py's).
import torch

T = torch
env = T.utils


def solve(x, residual, weight):
    try:
        env.collect_env.run("true")
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
