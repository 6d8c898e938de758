# Red team round 28 (2026-12-06, sixth session): a table torch filled before the worker's refusals went in
# still held the originals (passed permissive at bce3c90). Stopped now: every list, dict, set and tuple
# holding a refused callable's original gets its refusal (worker._swap_held_originals).
# The ORIGINAL torch._C._dispatch_library (refused: "registers kernels for torch's operators")
# from torch._dynamo.trace_rules.get_torch_obj_rule_map(): a new operator defined in the
# dispatcher and given a CPU kernel (a Python function) that solve then calls through torch.ops.
import cutlass  # noqa: F401
import torch
import torch._dynamo.trace_rules as _tr

_lib_fn = None
for _fn in _tr.get_torch_obj_rule_map():
    if getattr(_fn, "__name__", "") == "_dispatch_library":
        _lib_fn = _fn
if _lib_fn is None or _lib_fn is torch._C._dispatch_library:
    raise RuntimeError("no original")
_LIB = _lib_fn("DEF", "mkbrt28", "", "kernel.py", 1)
_LIB.def_("rms(Tensor x, Tensor r, Tensor w) -> Tensor")


def _impl(x, r, w):
    s = x.float() + r.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * w.float()).to(x.dtype)


_LIB.impl("rms", "CPU", _impl, False)
if "mkbrt28::rms" not in torch._C._dispatch_get_all_op_names():
    raise RuntimeError("not registered")


def solve(x, residual, weight):
    return torch.ops.mkbrt28.rms(x, residual, weight)
