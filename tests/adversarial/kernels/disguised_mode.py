# STRICT mode, both layers and the outside-call watch: kernel code that claims a DSL file.
# The DSL deputy (cutlass timer(enable=False)(f)(*a), see dsl_deputy_ctypes.py) makes
# code.replace(co_filename=<a CuTe DSL file>) and function(code, globals) trusted calls
# (TrustedCaller: dsl_roots). The disguised function is a TorchFunctionMode's __torch_function__,
# left entered: solve returns an empty tensor in ~us, and the real work runs when the worker
# clones the output for export, after the clock stopped. WatchProfile looks for frames whose
# co_filename is kernel.py: it sees none. (TorchFunctionMode / DisableTorchFunction reached by
# _operator.attrgetter on torch taken from the module's globals: no static finding.)
import logging
import _operator
import torch
from cutlass.base_dsl.utils.timer import timer

_deputy = timer(enable=False)
_g = _operator.attrgetter("f_globals")(logging.currentframe())
_T = _g["torch"]
_TFM = _operator.attrgetter("overrides.TorchFunctionMode")(_T)
_NoTF = _operator.attrgetter("_C.DisableTorchFunction")(_T)
_DSL_FILE = _operator.attrgetter("__code__.co_filename")(timer)
_pending = {}


def _handler(self, func, types, args=(), kwargs=None):
    if _pending and args:
        job = _pending.pop(id(args[0]), None)
        if job is not None:
            out, h, r, w = job
            with _NoTF():
                total = h.float() + r.float()
                inv = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
                out.copy_((total * inv * w.float()).to(out.dtype))
    return func(*args, **(kwargs or {}))


def _disguise(fn):
    code = _operator.attrgetter("__code__")(fn)
    code = _deputy(_operator.methodcaller("replace", co_filename=_DSL_FILE))(code)
    return _deputy(type(fn))(code, _g, None, ((), None))


_Lazy = type("_Lazy", (_TFM,), {"__torch_function__": _disguise(_handler)})
_mode = None
print("disguised as:", _DSL_FILE.rsplit("/", 3)[-3:])


def solve(hidden_states, residual, weight):
    global _mode
    if _mode is None:
        _mode = _Lazy()
        _mode.__enter__()
    with _NoTF():
        out = torch.empty_like(hidden_states)
    _pending[id(out)] = (out, hidden_states, residual, weight)
    return out
