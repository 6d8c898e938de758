# Red team round 28 (2026-12-06, sixth session): a table torch filled before the worker's refusals went in
# still held the originals (passed permissive at bce3c90). Stopped now: every list, dict, set and tuple
# holding a refused callable's original gets its refusal (worker._swap_held_originals).
# torch.jit._builtins._builtin_ops: (function, "aten::name") pairs torch built with getattr over
# torch, torch._C._nn, ... when torch._dynamo was pre-imported (before the worker's refusals):
# it still holds the ORIGINAL callables of refused names (aten::_chunk_cat here).
import cutlass  # noqa: F401
import torch
import torch.jit._builtins as _b

_orig = {}
for _fn, _name in _b._builtin_ops:
    _orig.setdefault(_name, _fn)
_chunk_cat = _orig["aten::_chunk_cat"]


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    y = (s * inv * weight.float()).to(x.dtype)
    # the refused private ATen op computes the returned tensor (flatten-concat of one chunk)
    return _chunk_cat([y], 0, 1).view(y.shape)
