# Red team round 27 (2026-12-06, sixth session): importlib.util.module_from_spec(torch._C.__spec__)
# made torch._C again, which writes CPython's copy of its first dictionary back onto the live module,
# undoing every replacement the worker made there; the kernel kept the original
# _jit_get_operation and put the judge's objects back (passed permissive at 4140947). Stopped now:
# _imp's makers refuse a module loaded before kernel.py.
# Bypass: importlib.util.module_from_spec(torch._C.__spec__) -> ExtensionFileLoader.create_module
# -> _imp.create_dynamic, which for an already-loaded single-phase extension re-applies the
# module dict CPython copied at init (m_copy) onto the live torch._C: every attribute the judge
# replaced there is the original again. The original _jit_get_operation is kept, then the judge's
# replacements are put back (its guard compares identities).
import importlib.util
import cutlass
import torch

_C = torch._C
_before = dict(vars(_C))
importlib.util.module_from_spec(_C.__spec__)
_lookup = _C._jit_get_operation  # the original now
for _k, _v in _before.items():
    if vars(_C).get(_k) is not _v:
        setattr(_C, _k, _v)
_chunk_cat = _lookup("aten::_chunk_cat")[0]


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    y = (s * inv * weight.float()).to(x.dtype)
    return _chunk_cat([y], 0, 1).view(y.shape)
