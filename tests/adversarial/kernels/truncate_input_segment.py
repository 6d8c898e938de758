# A judge failure instead of the kernel's verdict: the worker held a descriptor of the host's
# input segment (a memfd), and a kernel that truncated it (io.FileIO on every descriptor number,
# or _pyio's twin of it, which no rule named) made the host's next read of its own mapping of the
# inputs die of SIGBUS, however wrong the outputs (red team, 2026-12-05 evening). Segments are now
# created with their size sealed, and a received one is refused unless sealed; the worker closes
# each descriptor once mapped. The outputs here are wrong on purpose: the verdict is a mismatch.
import io

import torch


def _shrink(total):
    for fd in range(3, 64):
        try:
            f = io.FileIO(fd, "r+", closefd=False)
        except Exception:
            continue
        try:
            if f.seek(0, 2) >= total:
                f.truncate(0)
        except Exception:
            pass


def solve(x, residual, weight):
    _shrink(x.numel() * x.element_size())
    return torch.zeros_like(x)
