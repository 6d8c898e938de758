# Twelfth session's review (2026-12-07): own_index_list_walk through an installed hook. The
# conversion layer trusts installed code's __index__; numbers.Integral's is int(self), and the
# interpreter's own int() (not replaced) runs the class's __int__, which shortens torch's list of
# sizes mid-walk: torch read 8 sizes from a list of 6 with the static rules waived until the layer
# checked the type's other conversion hooks with the one asked. Refused statically (protocol
# methods). This kernel raises when the walk went past the end, so that a run the layers miss
# reads as that exception rather than as a pass.
import numbers

import torch

box = []


class Delegating:
    __index__ = numbers.Integral.__index__

    def __int__(self):
        if len(box) > 6:
            del box[6:]
        return 1


def solve(x, residual, weight):
    box.clear()
    box.extend([2, Delegating(), 1, 1, 1, 1, 3, 5])
    try:
        sizes = torch.zeros(30).view(box).dim()
    except RuntimeError:
        sizes = 0
    if sizes > len(box):
        raise RuntimeError(f"read {sizes} sizes from a list of {len(box)}")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
