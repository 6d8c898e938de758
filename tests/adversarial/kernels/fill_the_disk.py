# Attack: fill the judge machine's disk. Its workspace was a bind of a folder on the host's disk,
# writable, and RLIMIT_FSIZE bounds one file, not how many: file after file of 256 MiB (2 GiB
# here; enough of them fill the disk the judge, its store and every other evaluation write to).
# Now the workspace is a tmpfs of the worker's own (JudgeConfig.workspace_bytes, 1 GiB): the
# write that does not fit fails, and nothing reaches the host's disk.
import os

import numpy as np
import torch

_here = os.path.dirname(__file__)
for i in range(8):
    np.zeros(256 << 20, dtype=np.uint8).tofile(os.path.join(_here, f"fill{i}.bin"))


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
