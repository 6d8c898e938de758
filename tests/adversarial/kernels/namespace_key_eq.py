# Work after the clock inside the judge's own guard check (KernelThread::ClockTampered): a str
# subclass key with the hash of a guarded name ("from_dlpack"), placed ahead of that name in
# torch.utils.dlpack's dict, has its __eq__ run by the guard's slow-path lookups, on the kernel's
# thread, after the clock stopped and before the watch is back on. solve returns an empty
# tensor and bumps the dict; __eq__ computes the answer into it before the snapshot.
# Static evasion: the module is bound by a match capture pattern (no alias the audit follows),
# and the str-subclass key is stored by dataclasses' own setattr. Red team, 2026-12-05 evening:
# passed at 14x with no finding. Now the guard walks every owner's namespace for a key that is
# not a plain str before it looks anything up (runtime.clock_tampered), and dataclasses'
# private helpers are refused statically.
import dataclasses

import torch
import torch.utils.dlpack

_pending = []
_H = hash("from_dlpack")


class _K(str):
    def __hash__(self):
        return _H

    def __eq__(self, other):
        while _pending:
            x, r, w, out = _pending.pop()
            s = x.float() + r.float()
            inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
            out.copy_((s * inv * w.float()).to(x.dtype))
        return False


match torch.utils.dlpack:
    case m:
        pass
_f = m.from_dlpack
del m.from_dlpack
dataclasses._set_new_attribute(m, _K("zz"), 0)
m.from_dlpack = _f
_n = [0]


def solve(x, residual, weight):
    out = torch.empty(x.shape, dtype=x.dtype)
    _pending.append((x, residual, weight, out))
    _n[0] += 1
    m._bump = _n[0]  # the dict's version moves: the guard takes its slow path at the return
    return out
