# Red team (2026-12-05): kernel.py's own Python code run outside its calls (after solve returned), on a
# thread state made by a TorchScript fork's PythonOp after the census: no runtime.outside_call.
import functools, time

import torch

R = torch._utils._import_dotted_name
J = R("torch.jit")
T = R("torch")
RAN = []


def late(t: torch.Tensor) -> torch.Tensor:
    RAN.append(time.perf_counter())  # kernel.py code, running after solve returned
    return t


LATE = functools.partial(late)
SRC = """
def b_task(flag, d):
    while int(flag[0]) == 0:
        pass
    e = d * 2.0
    e = e * 2.0
    e = e * 2.0
    e = e * 2.0
    e = e * 2.0
    e = e * 2.0
    h = LATE(d)
    return (flag, d, h)

def launch(flag, d):
    fb = J.fork(b_task, flag, d)
    return fb
"""
CU = J.CompilationUnit()
CU.define(SRC, {"T": T, "J": J, "LATE": LATE}.get)
D = torch.ones(8192)
KEEP = []
RETURNED = []


def solve(x, residual, weight):
    print(
        "call",
        len(RETURNED) + 1,
        "late ran after previous return (us):",
        [round((r - q) * 1e6) for r, q in zip(RAN[-1:], RETURNED[-1:])],
        "total late runs",
        len(RAN),
        flush=True,
    )
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(x.dtype)
    flag = torch.zeros(1, dtype=torch.int32)
    KEEP.append((CU.launch(flag, D), flag))
    flag.fill_(1)
    RETURNED.append(time.perf_counter())
    return out
