# Static evasion: the module stored in a container and taken back out, so that no dotted name
# shows what is reached.
import torch

_MODULES = [torch]


def solve(x, residual, weight):
    try:
        _MODULES[0].os.system("true")
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype), s.to(residual.dtype)
