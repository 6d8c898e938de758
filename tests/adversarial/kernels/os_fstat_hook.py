# Red team (2026-12-06, round 2 against the RELEASE): passed at 65-76x, strict, before the judge's
# modules and the standard ones their code calls (os, gc, time, types) were guarded whole by
# harness_reach; now the replaced os.fstat is seen at the call's return (runtime.clock_tampered),
# and __annotations__ is introspection to the static audit.
# Strict variant of k_fstat: os reached through a function annotation (the static audit
# loses the module value there). os.fstat replaced by C callables. The worker's MAIN thread calls os.fstat(fd) in
# CpuTransport._map (values.py) while opening each call's inputs: after the host wrote them into
# the reused arena, before the clock. harness_reach guards the os module only by its __name__
# (it is an "owner" whose keys must stay plain str), not its functions.
#   os.fstat = partial(dict.get, {k: fake_stat}, k): dict.get hashes k; K.__hash__ is
#   partial(operator.countOf, _Ops(), None), which iterates the ops (the answer, computed from
#   views kept into the arena) and returns 0. The fake stat is a constant key, so the worker keeps
#   using one mapping of the (reused) memfd.
import functools
import operator
import os
import types

import torch


class _Ops:
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


class _K:
    pass


_Ops.__iter__ = functools.partial(iter, ())
_K.__hash__ = functools.partial(operator.countOf, _Ops(), None)
_k = _K()
_fake = types.SimpleNamespace(st_dev=-7, st_ino=-7)


def _holder(a: os):
    pass


# The os module reached through an annotation: the static audit does not follow it there.
_osmod = _holder.__annotations__["a"]
_state = {"nxt": None, "shape": None, "armed": 0}


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    if _state["armed"] >= 2 and _state["shape"] == x.shape:
        return _state["nxt"]
    result = _honest(x, residual, weight)
    if _state["armed"] == 0:
        nxt = torch.empty_like(x)
        _state["nxt"] = nxt
        _state["shape"] = x.shape
        ops = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt)
        _Ops.__iter__ = functools.partial(map, operator.call, ops)
        _osmod.fstat = functools.partial(dict.get, {_k: _fake}, _k)
    _state["armed"] += 1
    return result
