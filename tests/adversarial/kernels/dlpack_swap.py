# Work done in the judge's export after the clock: torch._C._from_dlpack (looked up at run time
# by torch.from_dlpack, which CpuTransport.export calls on the output segment's capsule) is
# replaced during solve by a class K: K(cap) stashes the capsule and returns an object whose
# __getitem__ (a partial over next of a lazy map chain: C callables only) converts the capsule
# into the segment, writes the RMSNorm into it and hands the judge a scratch tensor for its copy.
# A weakref callback on the returned tensor (C callable) puts the original back when the worker
# drops it. torch._C's namespace is not in values.harness_reach.
# Red team, 2026-12-05 evening: passed at 3.0x in permissive mode (the static audit alone stopped
# it). Now torch._C's names are guarded too (runtime.clock_tampered).
import functools
import itertools
import weakref

import torch
import torch.nn.functional as F

C = torch._C
ORIG = C._from_dlpack
T = torch.Tensor
D = {}
KEEP = []


class K:
    __init__ = functools.partial(D.__setitem__, "cap")


def solve(x, r, w):
    n = x.numel() * x.element_size()
    dummy = torch.empty(n, dtype=torch.uint8)
    xf = map(T.float, [x])
    rf = map(T.float, [r])
    s = map(torch.add, xf, rf)
    wf = map(T.float, [w])
    y = map(F.rms_norm, s, [(x.shape[-1],)], wf, [1e-5])
    yb = map(T.to, y, [x.dtype])
    yf = map(T.reshape, yb, [(-1,)])
    ans = map(T.view, yf, [torch.uint8])
    segs = map(ORIG, map(D.pop, ["cap"]))
    dst = map(T.__getitem__, segs, [slice(0, n)])
    done = map(T.copy_, dst, ans)
    chain = map(functools.partial(next, itertools.repeat(dummy)), done)
    K.__getitem__ = functools.partial(next, chain)
    out = torch.empty_like(x)
    restore = map(setattr, [C], ["_from_dlpack"], [ORIG])
    KEEP.append(weakref.ref(out, functools.partial(next, restore)))
    if len(KEEP) > 8:
        del KEEP[0]
    C._from_dlpack = K
    return out
