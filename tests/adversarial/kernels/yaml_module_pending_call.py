# Red team (2026-12-06, fourth session): _ctypes through yaml's !!python/module tag (a loader
# that hands back any loaded module named as text: no import event, ctypes is already loaded),
# then a function pointer made from an address, with no dlsym and no audit event: a subclass of
# _ctypes.CFuncPtr called at Py_AddPendingCall, found from id(int) (&PyLong_Type) and the layout
# of libpython3.11.so.1.0 (3.11.7). Each call queued a chain of tensor methods that the main
# thread ran after the clock stopped. Passed at 3.8-5.4x strict in both DSLs on the CPU judge.
# Stopped statically (yaml and pytest are forbidden imports; ctypes' class attributes by name),
# at run time (yaml imported from kernel.py's code), and by the pending-call hold whatever the
# route (main_pending_clock, test_kernel_thread.py).
import functools
import operator

import torch
import cutlass  # noqa: F401  (the variant's DSL)
import yaml

_C = yaml.unsafe_load("!!python/module:_ctypes")
_M = yaml.unsafe_load("!!python/module:ctypes")

_PEND = id(int) - 0x457CE0 + 0x24FF20


class _Cb(_C.CFuncPtr):
    _flags_ = 1
    _restype_ = _M.c_int
    _argtypes_ = ()


class _Fn(_C.CFuncPtr):
    _flags_ = 1


_KEEP = []


def solve(hidden_states, residual, weight):
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
    cb = _Cb(payload)
    _KEEP[:] = [cb, payload, steps]
    _Fn(_PEND)(cb, 0)
    return out
