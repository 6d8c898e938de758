# The RMSNorm written into the judge's output segment after its export, before its reply.
# 1. torch.from_dlpack (which CpuTransport calls on every segment's capsule, inputs and outputs)
#    finds torch._C._from_dlpack through torch.utils.dlpack's global `torch`: that global is
#    replaced (on a value the static audit does not attribute) by a namespace whose
#    _C._from_dlpack is the class K. K honestly converts (numpy's from_dlpack, torch.from_numpy:
#    C callables in a lazy map chain) and remembers the latest segment.
# 2. solve returns an empty tensor, and leaves a weakref on its first input whose callback (a
#    partial over next of a lazy map chain: no frame of kernel.py) computes the answer and copies
#    it into that segment. The judge drops the inputs when _call returns: after the export and the
#    guard's check, before the reply is sent.
# Red team, 2026-12-05 evening: passed at 11.3x with no finding. Now the worker calls torch's C
# converter bound before kernel.py was imported, torch.utils.dlpack's and torch._C's names are
# guarded (values.harness_reach), and a call's inputs and outputs stay alive until the next request.
import functools
import itertools
import types
import warnings
import weakref

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.dlpack

warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

P = functools.partial
R = itertools.repeat
T = torch.Tensor
SENT = object()
EMPTY = {}
DC = {}
D = {}
KEEP = []


class WW:
    __dlpack__ = P(DC.pop, "cap")


KK = WW()
A = map(iter, R(P(DC.get, "cap", SENT)), R(SENT))
B = map(itertools.islice, A, R(1))
C1 = map(map, R(EMPTY.get), B, R(R(KK)))
C2 = map(map, R(np.from_dlpack), C1)
C3 = map(map, R(torch.from_numpy), C2)
C4 = map(zip, R(R("seg")), C3)
UPD = map(D.update, C4)
GET = map(P, R(T.__getitem__), map(D.get, R("seg")))
FCH = map(EMPTY.get, UPD, GET)


class K:
    __init__ = P(DC.__setitem__, "cap")
    __getitem__ = property(P(next, FCH))


m = [torch.utils.dlpack][0]
m.torch = types.SimpleNamespace(_C=types.SimpleNamespace(_from_dlpack=K))


def solve(x, r, w):
    n = x.numel() * x.element_size()
    xa, ra, wa = x.detach(), r.detach(), w.detach()
    xf = map(T.float, [xa])
    rf = map(T.float, [ra])
    s = map(torch.add, xf, rf)
    wf = map(T.float, [wa])
    y = map(F.rms_norm, s, [(x.shape[-1],)], wf, [1e-5])
    yb = map(T.to, y, [x.dtype])
    yf = map(T.reshape, yb, [(-1,)])
    ans = map(T.view, yf, [torch.uint8])
    dst = map(T.__getitem__, map(D.get, ["seg"]), [slice(0, n)])
    done = map(T.copy_, dst, ans)
    KEEP.append(weakref.ref(x, P(next, done)))
    if len(KEEP) > 16:
        del KEEP[0]
    return torch.empty_like(x)
