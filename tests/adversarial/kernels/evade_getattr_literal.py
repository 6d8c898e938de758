# Static evasion: getattr with a literal name, then an attribute of the result.
import torch


def solve(x, residual, weight):
    try:
        getattr(torch, "os").system("true")
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
