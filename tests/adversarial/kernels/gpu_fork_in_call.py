# A process made inside a call on the GPU judge: eager RMSNorm (problem 28), with a child forked
# during every call. With the runtime audit recording only (MKB_AUDIT_RECORD=1) and the static
# findings as warnings, the process seal is the one layer left: the worker may make no process
# once kernel.py is loaded, so the fork fails (OSError) and the call raises. Without the seal the
# child exits at once and the kernel passes: a process of the kernel's own would be free to work
# beside or after its calls (on the CPU judge, fork_offload_clock did: 2.5-4.4x).
import os

import torch


def solve(x, residual, weight):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
