# Static evasion: the builtin open is used before a function of the same name is defined (the
# old audit took any name the kernel defines as its own).
import torch

try:
    _ENVIRON = open("/proc/self/environ", "rb").read()
except Exception:
    _ENVIRON = b""


def open(*args, **kwargs):
    raise RuntimeError("not this one")


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
