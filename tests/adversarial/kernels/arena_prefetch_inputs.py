# Red team (2026-12-06, the CPU arenas): with the host's input segment reused from call to call,
# the host wrote call N+1's inputs into memory the worker kept mapped BEFORE sending the request,
# and the worker dropped call N's inputs (serve: self._held = None) after receiving it, before
# the clock started. A __del__ made only of C callables, hung on call N's input tensor object,
# then ran with call N+1's inputs in memory reachable through views kept from call N, and
# computed call N+1's answer outside the clock on the main thread (within its 1 ms + 25% bound);
# solve returned it: passed at 4.5-5.4x on problem 28 (strict and permissive). With each call's
# inputs in a segment of their own, the finaliser reads call N's inputs: a mismatch.
import collections
import functools
import operator

import torch

_pending = [None]


class _Late:
    pass


def _ops(x, r, w, out):
    s = torch.empty(x.shape, dtype=torch.float32)
    sq = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    ops = [
        functools.partial(s.copy_, x),
        functools.partial(s.add_, r),
        functools.partial(torch.mul, s, s, out=sq),
        functools.partial(torch.mean, sq, -1, keepdim=True, out=m),
        functools.partial(m.add_, 1e-5),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(s.mul_, w),
        functools.partial(out.copy_, s),
    ]
    return functools.partial(collections.deque, map(operator.call, ops), 0)


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    ready = _pending[0]
    result = ready if ready is not None else _honest(x, residual, weight)
    # Arm the next call: views (new tensor objects, same arena memory) that the finaliser reads
    # once the host has written the next inputs there.
    nxt = torch.empty_like(x)
    _Late.__del__ = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt)
    x._late = _Late()  # freed with the worker's input tensor object, at the next request
    _pending[0] = nxt
    return result
