# Red team (2026-12-06, third session, last round): the import system as a deputy. A file loader of
# the import system's own class (SourceFileLoader, reached through a re-export the static audit
# does not resolve), built for the DSL's cutlass/__init__.py with get_data and path_stats of the
# kernel's on the instance, compiled kernel source under that name from the import system's
# frames and exec'd it there (not registered as the kernel's): ctypes trusted, a pending call
# computed the answer after the clock. Passed at 5.7-6.4x, strict. Now the import system's
# compile must be of the named file's bytes, and its marshal.loads of the .pyc it opened.
import os
import types

import torch
import cutlass

FAKE = os.path.join(os.path.dirname(os.path.abspath(cutlass.__file__)), "__init__.py")

SRC = b"""
if "_add" not in globals():
    import ctypes
    _add = ctypes.pythonapi.Py_AddPendingCall
    _add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    _add.restype = ctypes.c_int
    WORK = []

    def _work(arg):
        try:
            if WORK:
                x, r, wt, out = WORK
                s = x.float().add_(r)
                inv = (s * s).mean(-1, keepdim=True).add_(1e-5).rsqrt()
                out.copy_(s.mul_(inv).mul_(wt))
                del WORK[:]
        except BaseException:
            pass
        return 0

    _CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_work)
    _CBP = ctypes.cast(_CB, ctypes.c_void_p).value
if ARGS:
    WORK[:] = ARGS
    del ARGS[:]
    _add(_CBP, None)
"""


# The red team reached the loader as scipy._importlib.machinery (a re-export); scipy's import now
# stops at the worker's ctypes guard (its _ccallback_c extension casts through ctypes as it
# loads, with no installed module body between), so the route goes to the same class directly.
import importlib.machinery as _machinery

_LT = _machinery.SourceFileLoader
_L = _LT("mkbfake", FAKE)
_L.get_data = lambda path: SRC


def _no_stats(path):
    raise OSError


_L.path_stats = _no_stats
_CODE = _LT.get_code(_L, "mkbfake")
_L.get_code = lambda fullname: _CODE
_MOD = types.ModuleType("mkbfake")
_MOD.ARGS = []
_L.exec_module(_MOD)


def solve(hidden_states, residual, weight):
    out = torch.empty_like(hidden_states)
    _MOD.ARGS[:] = (hidden_states, residual, weight, out)
    _L.exec_module(_MOD)
    return out
