# Kernel code run by a finaliser: the output of each call carries a weakref callback that fires
# when the judge drops the previous call's outputs, between calls. What it does there is nothing
# useful; that it runs at all is the class (code outside the calls) the judge refuses, however the
# kernel arranged to be called.
import weakref

import torch

_refs = []


def _later(ref):
    torch.zeros(1).sum()  # anything: the point is that kernel.py runs here


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (total * inv_rms * weight.float()).to(hidden_states.dtype)
    _refs.append(weakref.ref(out, _later))
    return out
