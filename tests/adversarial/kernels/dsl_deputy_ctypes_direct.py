# The CuTe DSL as a deputy, with nothing else: ctypes taken from sys.modules (the DSL imported
# it; reading sys.modules raises no event) and called through cutlass's timer(enable=False)(f),
# which calls f: the innermost frame outside the standard library is the DSL's, which is trusted
# for ctypes. Open (docs/judge.md, residual risks): DSL code should be trusted only inside the
# DSL entry points the worker wraps.
import sys

import torch
from cutlass.base_dsl.utils.timer import timer

_ctypes = sys.modules["ctypes"]
_libc = timer(enable=False)(_ctypes.CDLL)(None)
_getpid = timer(enable=False)(getattr)(_libc, "getpid")
print("native getpid:", timer(enable=False)(_getpid)())


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (total * inv_rms * weight.float()).to(hidden_states.dtype)
