# Honest: fused add + RMSNorm (problem 28) through a small class of the kernel's own that uses the
# protocol methods a kernel may define (construction, a call, printing, a context manager, a
# finaliser) and derives from a builtin type: the protocol-method rule leaves it alone.
import torch


class Settings(dict):
    pass


class Norm:
    def __init__(self, eps):
        self.eps = eps

    def __call__(self, x, residual, weight):
        s = x.float() + residual.float()
        inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + self.eps)
        return (s * inv * weight.float()).to(x.dtype)

    def __repr__(self):
        return f"Norm(eps={self.eps})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __del__(self):
        pass


SETTINGS = Settings(eps=1e-5)


def solve(x, residual, weight):
    with Norm(SETTINGS["eps"]) as norm:
        return norm(x, residual, weight)
