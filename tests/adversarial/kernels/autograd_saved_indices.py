# Red team round 27 (2026-12-06, sixth session): autograd ran a backward kernel in C++ with index data
# a saved-tensor hook substituted (out of bounds with no error, tried outside the judge: a write
# past the input). Passed strict and permissive at 4140947: the static audit named nothing.
# Stopped now: autograd's backward pass refused at run time (the engine's run_backward).
# Bypass: autograd runs the refused aten::max_pool2d_with_indices_backward natively, with index
# data the kernel substitutes through saved_tensors_hooks (unpack returns any tensor it likes).
import cutlass
import torch
import torch.nn.functional as F


def _pack(t):
    return t


def _unpack(t):
    if t.dtype == torch.int64:  # the saved indices: every window's argmax redirected to element 5
        return torch.full_like(t, 5)
    return t


def _probe():
    with torch.enable_grad():
        a = torch.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
        with torch.autograd.graph.saved_tensors_hooks(_pack, _unpack):
            y, _ = F.max_pool2d(a, 2, return_indices=True)
        y.sum().backward()
        return a.grad.flatten().tolist()


_G = _probe()
assert _G == [0, 0, 0, 0, 0, 4.0] + [0] * 10, _G


def solve(x, residual, weight):
    g = _probe()
    scale = g[5] / 4.0  # 1.0 only if the backward kernel used the substituted indices
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float() * scale).to(x.dtype)
