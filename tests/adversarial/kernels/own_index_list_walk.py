# Eleventh session (2026-12-07, CPU judge): the simplest callback inside torch's walk of a list of
# sizes (PyList_GET_ITEM, the length read first) is an `__index__` of the kernel's own: it shortens
# the list and Tensor.view reads past its end. Refused statically (protocol methods outside the
# short list). With the static rules waived it ran (measured: "read 8 sizes from a list of 6",
# permissive); since the twelfth session the C API's conversions that compiled code calls refuse a
# hook of kernel code before it runs (sequence_hold.cc). This kernel raises when the walk went past
# the end, so that a run the layers miss reads as that exception rather than as a pass.
import torch

box = []


class Shrinker:
    def __index__(self):
        if len(box) > 6:
            del box[6:]
        return 1


def solve(x, residual, weight):
    box.clear()
    box.extend([2, Shrinker(), 1, 1, 1, 1, 3, 5])
    try:
        sizes = torch.zeros(30).view(box).dim()
    except RuntimeError:
        sizes = 0
    if sizes > len(box):
        raise RuntimeError(f"read {sizes} sizes from a list of {len(box)}")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
