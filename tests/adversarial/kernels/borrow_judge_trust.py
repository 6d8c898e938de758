# Borrows the judge's trust (found by the red team, 2026-12-01): loads a copy of one of the
# judge's own modules under another name from its file, then calls a function of it with a chain
# of C callables (functools.partial over map) that calls sys._getframe, so that the innermost
# Python frame at the event is the judge's. With the frame it walks f_back (no audit event) to
# the worker and replaces its clock. The judge makes no code of its own files once kernel.py is
# loaded (runtime.forbidden_import), and judge frames confer no trust with kernel.py on the stack.
import functools
import importlib.util
import itertools
import os
import sys

import torch

_package = os.path.dirname(importlib.util.find_spec("metakernelbench").origin)
_spec = importlib.util.spec_from_file_location("pmx", os.path.join(_package, "peak_memory.py"))
_copy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_copy)
_frames = []
_copy.meta_peak_bytes(functools.partial(_frames.extend, map(sys._getframe, [0])))
_frame = _frames[0] if _frames else None
while _frame is not None:
    _self = _frame.f_locals.get("self")
    if type(_self).__name__ == "Worker":
        _self._perf = itertools.count(0.0, 1e-9).__next__
        break
    _frame = _frame.f_back


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (total * inv_rms * weight.float()).to(hidden_states.dtype)
