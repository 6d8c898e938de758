# STRICT mode: a WRONG kernel (zeros) whose verdict blames the judge. logging.currentframe +
# functools.wraps (see wraps_frame_clock.py) reach the Worker and worker.py's globals; the
# Worker's _call is replaced (instance attribute) by the judge's own _core.constant_function,
# a C++ callable (no kernel.py frame: the outside-call watch sees nothing), answering every
# call with {"ok": False, "judge_error": ...}: the host records an infrastructure error.
import functools
import logging
import torch


class _Box(dict):
    def __setattr__(self, name, value):
        self[name] = value


def _read(obj, *names):
    box = _Box()
    functools.wraps(obj, assigned=names, updated=())(box)
    return box


_fr = logging.currentframe()
_worker = _mod = None
while _fr is not None:
    _b = _read(_fr, "f_back", "f_locals", "f_globals")
    _self = _b["f_locals"].get("self")
    if type(_self).__name__ == "Worker":
        _worker, _mod = _self, _b["f_globals"]
        break
    _fr = _b["f_back"]
print("worker found:", _worker is not None)
if _worker is not None:
    _reply = {"ok": False, "judge_error": "CUDA in the worker: device lost (Xid 79)"}
    setattr(_worker, "_call", _mod["_core"].constant_function(_reply))


def solve(hidden_states, residual, weight):
    return torch.zeros_like(hidden_states)
