# A torch function mode entered on the worker's MAIN thread. The defence against modes is that
# kernel.py runs on its own thread, so a mode it enters is that thread's. But a finaliser runs on
# whichever thread drops the object: the worker drops call N's inputs on its main thread when the
# RELEASE arrives. A __del__ of C callables hung on an input pushes, there, a mode of torch's own
# (torch.utils._device.DeviceContext: its __torch_function__ is torch's Python, no kernel frame)
# whose `device` is a property made of C callables. From then on, every torch constructor the main
# thread calls reads mode.device -- the first is torch.empty((), dtype=...) in CpuTransport.open,
# after the host wrote call N+1's inputs into the reused arena and before the clock starts. The
# property computes the answer from views kept into the arena (min(self, key=ops) returns the
# device and runs the ops once per read).
# (Red team, 2026-12-06, against 936411e: passed at 50x, permissive; strict, the static audit
# refuses the push.) Now a mismatch: the finaliser runs on the kernel's thread (Worker._let_go).
import functools
import operator

import torch
from torch.utils._device import DeviceContext


class _Ops:
    pass


def _ops(x, r, w, out):
    s = torch.empty(x.shape, dtype=torch.float32)
    sq = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    return [
        functools.partial(s.copy_, x),
        functools.partial(s.add_, r),
        functools.partial(torch.mul, s, s, out=sq),
        functools.partial(torch.mean, sq, -1, keepdim=True, out=m),
        functools.partial(m.add_, 1e-5),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(s.mul_, w),
        functools.partial(out.copy_, s),
    ]


class _Dev(DeviceContext):
    pass


_mode = _Dev("cpu")
_cpu = torch.device("cpu")
_Dev.__iter__ = functools.partial(iter, [_cpu])
_Dev.device = property(functools.partial(min, key=functools.partial(dict.fromkeys, _Ops())))


class _Arm:
    pass


_Arm.__del__ = functools.partial(torch._C._push_on_torch_function_stack, _mode)
_state = {"nxt": None, "ptr": None, "armed": False}


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    nxt = _state["nxt"]
    if nxt is None or _state["ptr"] != x.data_ptr() or nxt.shape != x.shape:
        result = _honest(x, residual, weight)
        nxt = torch.empty_like(x)
        _state["nxt"] = nxt
        _state["ptr"] = x.data_ptr()
        _Ops.__iter__ = functools.partial(
            map,
            operator.call,
            _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt),
        )
    else:
        result = nxt
    if not _state["armed"]:
        _state["armed"] = True
        x._arm = _Arm()  # dropped on the worker's main thread at the next RELEASE
    return result
