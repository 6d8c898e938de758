# The GPU form of arena_prefetch_inputs: the GPU judge's input buffer (the worker's own,
# RESERVE_INPUTS) is reused from call to call, and the kernel keeps views of it. A __del__ made
# only of C callables, hung on call N's input tensor object, runs when the worker lets call N's
# objects go. Before the RELEASE round trip that was after the host had written call N+1's
# inputs into the buffer: the finaliser copied them to host memory, computed call N+1's answer on
# the CPU and copied it back, with no launch (copies are not launches) and no clock; solve then
# returned it through one small launch. With the RELEASE the finaliser reads call N's inputs: a
# mismatch. (Its CPU work falls inside the host's round-trip bound only on a small workload; on
# problem 28's full one it is tens of milliseconds, far over it.)
import collections
import functools
import operator

import torch

_pending = [None]


class _Late:
    pass


def _ops(x, r, w, out):
    xs = torch.empty(x.shape, dtype=torch.float32)
    s = torch.empty(x.shape, dtype=torch.float32)
    sq = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    ws = torch.empty(w.shape, dtype=torch.float32)
    host = torch.empty(x.shape, dtype=x.dtype)
    ops = [
        functools.partial(s.copy_, x),  # device to host: a copy, not a launch
        functools.partial(xs.copy_, r),
        functools.partial(ws.copy_, w),
        functools.partial(s.add_, xs),
        functools.partial(torch.mul, s, s, out=sq),
        functools.partial(torch.mean, sq, -1, keepdim=True, out=m),
        functools.partial(m.add_, 1e-5),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(s.mul_, ws),
        functools.partial(host.copy_, s),
        functools.partial(out.copy_, host),  # host to device
    ]
    return functools.partial(collections.deque, map(operator.call, ops), 0)


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    ready = _pending[0]
    result = ready * 1 if ready is not None else _honest(x, residual, weight)
    nxt = torch.empty_like(x)
    _Late.__del__ = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt)
    x._late = _Late()  # freed with the worker's input tensor object
    _pending[0] = nxt
    return result
