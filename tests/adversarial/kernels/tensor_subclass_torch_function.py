# Twelfth session (2026-12-07): a tensor subclass's own __torch_function__ (a classmethod, the
# documented extension point) runs inside torch's dispatch while torch holds the other arguments
# borrowed, as the instance attribute of plain_torch_function_attribute did (raw memory there).
# The static protocol rule refuses the method; with it waived, the worker's lock of the dispatch
# (worker._lock_torch_function_dispatch) keeps torch from calling it. Here it only proves it ran.
import torch

ran = []


class Traced(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        ran.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


def solve(x, residual, weight):
    s = torch.cat([x.float().as_subclass(Traced)]) + residual.float()
    out = (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.float()).to(x.dtype)
    return out.as_subclass(torch.Tensor) if ran else out * 0
