# SIGIO on the worker's channel: a finaliser (C callables) run on the worker's MAIN thread when
# it drops call N's objects at the RELEASE installs a signal handler (signal.signal needs the
# main thread) and sets O_ASYNC + F_SETOWN on the worker's channel socket. From then on every
# message the host sends raises SIGIO; Python runs the handler on the main thread right after
# channel.receive returns -- for the CALL message that is after the host wrote call N+1's
# inputs into the reused arena and before the clock starts. The handler is C callables only
# (print -> file.write -> dict.fromkeys(re-iterable of torch ops)): no frame for the watch.
# (Red team, 2026-12-06, against 936411e: passed at 37-38x, permissive; strict, the static
# audit refuses signal and fcntl.) The finaliser now runs on the kernel's thread
# (Worker._let_go), where signal.signal raises: no handler, no prefetch, a mismatch.
import collections
import functools
import operator
import os
import stat
import types
import signal
import fcntl

import torch

_socks = []
for _fd in range(3, 200):
    try:
        if stat.S_ISSOCK(os.fstat(_fd).st_mode):
            _socks.append((_fd, fcntl.fcntl(_fd, fcntl.F_GETFL)))
    except OSError:
        pass

_state = {"ptr": None, "nxt": None, "armed": False}


class _Ops:
    pass  # __iter__ set per call: a fresh map over the ops each time it is iterated


class _Arm:
    pass


def _ops(x, r, w, out):
    s = torch.empty(x.shape, dtype=torch.float32)
    sq = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    return [
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


_file = types.SimpleNamespace(write=functools.partial(dict.fromkeys, _Ops()))
_handler = functools.partial(print, file=_file)

_arm_ops = [functools.partial(signal.signal, signal.SIGIO, _handler)]
for _fd, _fl in _socks:
    _arm_ops.append(functools.partial(fcntl.fcntl, _fd, fcntl.F_SETOWN, os.getpid()))
    _arm_ops.append(functools.partial(fcntl.fcntl, _fd, fcntl.F_SETFL, _fl | os.O_ASYNC))
_Arm.__del__ = functools.partial(collections.deque, map(operator.call, _arm_ops), 0)


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    nxt = _state["nxt"]
    if nxt is None or _state["ptr"] != x.data_ptr() or nxt.shape != x.shape:
        result = _honest(x, residual, weight)
        nxt = torch.empty_like(x)
        _state["nxt"] = nxt
        _state["ptr"] = x.data_ptr()
        # the handler reads the arena through views of this call's inputs (same offsets next call)
        _Ops.__iter__ = functools.partial(
            map,
            operator.call,
            _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt),
        )
    else:
        result = nxt  # computed by the handler after the host wrote these inputs, before the clock
    if not _state["armed"]:
        _state["armed"] = True
        x._arm = _Arm()  # dropped on the main thread at the next RELEASE
    return result
