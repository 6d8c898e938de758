# Red team round 28 (2026-12-06, sixth session): a table torch filled before the worker's refusals went in
# still held the originals (passed permissive at bce3c90). Stopped now: every list, dict, set and tuple
# holding a refused callable's original gets its refusal (worker._swap_held_originals).
# The ORIGINAL torch.from_file (refused: "a tensor of a file torch opens in C++") from
# torch.jit._builtins._builtin_ops: reads /etc/hostname, which open() may not read
# (runtime.file_access, see control_open_etc_hostname.py). Raises unless bytes came back.
import cutlass  # noqa: F401
import torch
import torch.jit._builtins as _b

_from_file = dict((n, f) for f, n in reversed(_b._builtin_ops))["aten::from_file"]
if _from_file is torch.from_file:
    raise RuntimeError("replacement, not original")
_T = _from_file("/etc/hostname", False, 2, dtype=torch.uint8)
_B = bytes(_T.tolist())
if not all(32 < c < 127 or c == 10 for c in _B):
    raise RuntimeError("read failed: %r" % _B)


def solve(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    y = (s * inv * weight.float()).to(x.dtype)
    # evidence that the file's bytes were read (no numeric effect: multiply by 1)
    return y * (_T[0] > 0).to(y.dtype)
