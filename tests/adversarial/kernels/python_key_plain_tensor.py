# Red team (2026-12-06, round 4): passed at 52-63x, permissive (strict, the static audit refuses
# __class__, __dict__ and __torch_dispatch__), before TensorFacts named an exact torch.Tensor
# whose dispatch keys send its operations to Python as it names a subclass: not plain, never
# read further. Now a mismatch.
# Red team 4: the returned tensor is an exact torch.Tensor (its __class__ flipped back from a
# subclass) whose TensorImpl keeps torch's Python dispatch key. The worker's describe calls
# TensorBase.detach on it after the clock stopped; the dispatcher looks up __torch_dispatch__ on
# the *instance* (its __dict__ is consulted), where a key object hashing like "__torch_dispatch__"
# has an __eq__ made of C callables that computes the answer into the tensor's memory.
import functools
import operator

import torch

_IMPL = functools.partial(torch._C._disabled_torch_dispatch_impl)


class _S(torch.Tensor):
    pass


_S.__torch_dispatch__ = _IMPL


class _Ops:
    pass


class _K:
    pass


_K.__hash__ = functools.partial(int, hash("__torch_dispatch__"))
_K.__eq__ = functools.partial(operator.countOf, _Ops())

_state = {"ptr": None, "out": None}


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


def _arm(x, residual, weight):
    nxt = torch.empty_like(x)
    _Ops.__iter__ = functools.partial(map, operator.call, [])
    t = nxt.as_subclass(_S)
    t.__class__ = torch.Tensor
    t.__dict__[_K()] = None
    t.__torch_dispatch__ = _IMPL
    _Ops.__iter__ = functools.partial(map, operator.call, _ops(x, residual, weight, nxt))
    _state["ptr"] = (x.data_ptr(), residual.data_ptr(), weight.data_ptr(), x.shape)
    _state["out"] = t


def solve(x, residual, weight):
    if _state["ptr"] != (x.data_ptr(), residual.data_ptr(), weight.data_ptr(), x.shape):
        _arm(x, residual, weight)
    return _state["out"]
