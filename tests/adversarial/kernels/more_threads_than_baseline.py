# Red team (2026-12-05): the eager baseline runs with one intra-op thread; this kernel gives its
# own eager ops two (1.21x against an honest 0.84x on the 2-core CPU machine).
import torch


def solve(x, residual, weight):
    torch.set_num_threads(2)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
