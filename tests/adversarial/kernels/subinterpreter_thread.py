# A second interpreter in the worker (CPython's _xxsubinterpreters): code run there, and any thread
# it starts, is outside the kernel's thread, its watch and (before the census took every
# interpreter) its census of threads. Without the import rule it hung the worker until the
# evaluation's timeout (both modes); now refused statically and, in permissive mode, at its import.
import _xxsubinterpreters as interpreters
import torch

_ID = interpreters.create()


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (total * inv_rms * weight.float()).to(hidden_states.dtype)
    interpreters.run_string(
        _ID, "import threading, time\nthreading.Thread(target=time.sleep, args=(0.2,), daemon=True).start()\n"
    )
    return out
