# With the runtime audit in record-only mode (MKB_AUDIT_RECORD=1: frames are not refused, the
# layer behind it is what is tested): walk from kernel.py's own frame, through f_back, to the
# worker's frames and replace the harness clock there. The worker runs kernel.py on a thread of
# its own (KernelThread): the walk ends in kernel.py's frames, nothing of the worker's is
# reached, and the kernel is timed honestly.
import sys

import torch

FOUND = []


def _reach_worker():
    frame = sys._getframe(0)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and type(owner).__name__ == "Worker":
            owner._perf = lambda: 0.0  # the CPU clock of the old call path
            FOUND.append(owner)
        frame = frame.f_back


_reach_worker()


def solve(hidden_states, residual, weight):
    if not FOUND:
        _reach_worker()
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (total * inv_rms * weight.float()).to(hidden_states.dtype)
