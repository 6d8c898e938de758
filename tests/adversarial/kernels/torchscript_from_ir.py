# TorchScript built from IR text rather than from source: torch._C.parse_ir and
# _create_function_from_graph (reached as torch.autograd.function._C) make a callable graph with no
# `compile` event; with prim::fork in it, work after solve returns. Red team, 2026-12-05
# evening: compiled and ran, no finding.
import torch
import torch.autograd.function as _tt  # torch._tensor until private modules were refused (2026-12-06)

_GRAPH = _tt._C.parse_ir(
    """graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  return (%y)"""
)
_FN = _tt._C._create_function_from_graph("doubled", _GRAPH)


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
