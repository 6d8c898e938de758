# Twelfth session (2026-12-07): torch's __torch_function__ dispatch is locked off in the worker
# (worker._lock_torch_function_dispatch), which closes the borrowed-argument defect behind
# plain_torch_function_attribute and the third red team. torch._C.DisableTorchFunctionSubclass's
# __exit__ restores the state its __enter__ saved; an instance never entered holds "on", so its
# bare __exit__ turns the dispatch back on. Then a handler of the kernel's (an instance attribute
# on a plain object) runs inside torch.cat's dispatch, where torch holds the other arguments
# borrowed (raw memory in plain_torch_function_attribute). Here it only proves it ran: the answer
# is right only if it did.
import torch

ran = []


class Carrier:
    pass


def handler(func, types, args=(), kwargs=None):
    ran.append(func)
    return torch.cat([a for a in args[0] if isinstance(a, torch.Tensor)])


def solve(x, residual, weight):
    torch._C.DisableTorchFunctionSubclass().__exit__(None, None, None)
    carrier = Carrier()
    carrier.__torch_function__ = handler
    try:
        torch.cat([carrier, torch.zeros(1)])
    except TypeError:
        pass
    s = x.float() + residual.float()
    out = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.float()).to(x.dtype)
    return out if ran else out * 0
