# Eleventh session's red team (2026-12-07, CPU judge): torch._numpy's ndarray converts to an int by
# calling `self.tensor.item()`, and `tensor` is a plain attribute: an ndarray in a list of sizes
# whose tensor is an object of the kernel's ran the kernel's `item` in the middle of torch's walk
# of the list (PyList_GET_ITEM, the length read first), which shortened the list; torch read past
# its end and the worker died (SIGSEGV) with the static rules waived. Refused statically (torch's
# private names) and at run time (worker._UNAUDITED_REACH: its conversions refuse,
# runtime.native_code). The answer is then computed honestly.
import torch
import torch._numpy as tnp

box = []


class T:
    def __init__(self, box):
        self.box = box

    def item(self):
        del self.box[1:]
        return 1


def solve(x, residual, weight):
    g = tnp.ndarray(torch.tensor(1))
    g.tensor = T(box)
    keep = [1] * 8
    box.clear()
    box.extend([1, g] + [1] * 6)
    try:
        torch.ones(8).view(box)
    except Exception:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
