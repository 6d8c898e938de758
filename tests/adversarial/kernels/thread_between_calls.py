# A thread started while no call of solve is under way: a finaliser on this call's input (the
# judge drops it after the call) starts a threading.Thread (reached through filelock's
# re-export) whose target is kernel.py's. CPython 3.11 raises no audit event for a thread start,
# and a thread made after the watch on kernel code was switched on has no profile function, so
# its code ran unseen, and joined or finished before the next call the census never saw it (red
# team, 2026-12-05 evening). The worker refuses thread starts between calls.
import weakref

import torch
from filelock._core import _state as threading

_LATE = []


def _late():
    _LATE.append(sum(range(1000)))


def solve(x, residual, weight):
    weakref.finalize(x, threading.Thread(target=_late).start)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
