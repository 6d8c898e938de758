# Static evasion: ctypes reached as an attribute of torch (no `import ctypes` anywhere).
import torch


def solve(x, residual, weight):
    try:
        libc = torch.ctypes.CDLL(None)
        libc.getpid()
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
