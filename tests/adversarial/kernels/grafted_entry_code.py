# Red team (2026-12-06, third session): a function of the kernel's given the DSL entry wrapper's
# code (its frame passed for the DSL's entry point), then code the DSL compiled under one of its
# own file names (ctypes trusted, the watch on kernel code blind), whose pending call computed
# the answer on the worker's main thread after the clock. Passed at 13-16.5x, strict, with no
# forbidden name in the source:
#  - attribute reads by dotted text through torch.autograd.profiler_util.attrgetter (operator's
#    attrgetter re-exported; the rule names operator.attrgetter only)
#  - function.__code__ set through contextlib.wraps(..., assigned=("__code__",)) (functools.wraps
#    re-exported; the rule names functools.wraps only)
#  - the builtin compile read as cutlass.cute.arch.nvvm_wrappers.nvvm._module.builtins.compile
import contextlib

import os
import types

import torch
import torch.autograd.profiler_util as pu
import cutlass
import cutlass.cute as cute
import cutlass.base_dsl.ast_helpers as ah

_ag = pu.attrgetter
_wr = contextlib.wraps
_KEY = ("__co" + "de__",)
_DIR = os.path.dirname(os.path.abspath(cutlass.__file__))
_FAKE = os.path.join(_DIR, "cute", "runtime.py")  # a DSL file that mentions ctypes

_SRC = """
import ctypes
def setup(W):
    add = ctypes.pythonapi.Py_AddPendingCall
    add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    add.restype = ctypes.c_int
    W["add"] = add
    W["cb"] = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(W["work"])
    W["cbp"] = ctypes.cast(W["cb"], ctypes.c_void_p).value
    return 0

def queue(W):
    W["add"](W["cbp"], None)
    return 0

def work(arg):
    try:
        job = JOB
        if job:
            x, residual, weight, out = job
            s = x.float().add_(residual)
            inv = torch.rsqrt(torch.mean(s * s, -1, keepdim=True).add_(1e-5))
            out.copy_(s.mul_(inv).mul_(weight))
            job.clear()
    except BaseException:
        pass
    return 0

W["setup"], W["queue"], W["work"] = setup, queue, work
"""

JOB = []
W = {}


def _cells(a, b):
    def g():
        return a, b

    return g


def _entry(original):
    # dsl_entry.wrapper's `entry` code over a closure of ours (original, run=None)
    return _wr(cute.compile, assigned=_KEY, updated=())(_cells(original, None))


def _body():
    return None


import cutlass.cute.arch.nvvm_wrappers as _nw

_comp = _ag("_module.builtins.compile")(_nw.nvvm)
_loop = ah.while_selector(write_args=[_SRC, _FAKE, "exec"])
_mod = _entry(_loop)(_comp)  # compile() inside entry -> ir_while_loop (the DSL's)
_run = _wr(types.SimpleNamespace(__code__=_mod), assigned=_KEY, updated=())(_body)
_run()  # the module body, under the DSL's file name, in this module's globals
_entry(W["setup"])(W)
_Q = _entry(W["queue"])


def solve(x, residual, weight):
    out = torch.empty_like(x)
    JOB[:] = (x, residual, weight, out)
    _Q(W)
    return out
