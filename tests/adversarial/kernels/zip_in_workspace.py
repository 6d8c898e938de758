# Red team (2026-12-06, third session): Python code from a zip the kernel wrote into its
# workspace, imported by CuTe DSL's import re-run through kernel.py's own __path__ (zipimport,
# whose frames were not the import system's to the audit), under a code file name that starts
# with the DSL's folder and climbs out with ".." (a lexical check took it for the DSL's installed
# code: ctypes trusted). Its solve queues a pending call that computes the answer on the worker's
# main thread after the clock stops. Passed at 14-17x, strict; now the import system's open of
# the archive is refused, and a path with ".." components is under no root.
import os

import numpy as np
import torch

import cutlass
import cutlass.cute as cute

_ZIP = b'PK\x03\x04\x14\x00\x00\x00\x00\x00`\\\x86]\'\xb4\xe4\xc4\xd3\x03\x00\x00\xd3\x03\x00\x00\x86\x00\x00\x00../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../usr/zz/evil.py# Loaded by zipimport from the kernel\'s workspace, under a file name that reads as installed code.\nimport sys\nimport ctypes\nimport torch\n\n_add = ctypes.pythonapi.Py_AddPendingCall\n_add.argtypes = [ctypes.c_void_p, ctypes.c_void_p]\n_add.restype = ctypes.c_int\nWORK = []\nCOUNT = [0]\n\n\ndef _main_work(arg):\n    try:\n        if WORK:\n            x, residual, weight, out = WORK\n            s = x.float().add_(residual)\n            inv = torch.rsqrt(torch.mean(s * s, -1, keepdim=True).add_(1e-5))\n            out.copy_(s.mul_(inv).mul_(weight))\n            WORK.clear()\n            COUNT[0] += 1\n    except BaseException:\n        pass\n    return 0\n\n\n_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_main_work)\n_CBP = ctypes.cast(_CB, ctypes.c_void_p).value\n\n\ndef solve(x, residual, weight):\n    out = torch.empty_like(x)\n    WORK[:] = (x, residual, weight, out)\n    _add(_CBP, None)\n    return out\n\n\nsys.modules["mkbz"] = sys.modules[__name__]\nraise RuntimeError("mkbz ready")\nPK\x01\x02\x14\x03\x14\x00\x00\x00\x00\x00`\\\x86]\'\xb4\xe4\xc4\xd3\x03\x00\x00\xd3\x03\x00\x00\x86\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../usr/zz/evil.pyPK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\xb4\x00\x00\x00w\x04\x00\x00\x00\x00'
_DIR = os.path.dirname(os.path.abspath(__file__))
np.frombuffer(_ZIP, dtype=np.uint8).tofile(os.path.join(_DIR, "x.zip"))
_LIB = os.path.dirname(os.path.abspath(cutlass.__file__))
__path__ = [_LIB + "/.." * 40 + _DIR + "/x.zip/" + "../" * 40 + "usr/zz"]


def solve(x, residual, weight):
    return mkbz.solve(x, residual, weight)


@cute.jit
def _touch():
    pass


_touch._dsl_cls._get_dsl().envar._arch = "sm_90a"
try:
    _touch()
except Exception:
    pass

try:
    raise ImportError
    import kernel.evil  # noqa: F401  (read by the DSL's preprocessor only)
except ImportError:
    pass

import mkbz  # noqa: E402
