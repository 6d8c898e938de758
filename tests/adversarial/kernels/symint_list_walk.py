# Eleventh session (2026-12-07, CPU judge): torch's C++ walks a list of sizes (Tensor.view's
# SymIntArrayRef) with PyList_GET_ITEM and the length it read first, and converting a symbolic item
# (torch.SymInt) asks its node's Python is_int in the middle of the walk. A node of the kernel's
# that shortens the list makes torch read the slots past its end: here items kept alive elsewhere
# (torch asks each one's is_int while the list's length is 1), with the heap arranged an object
# of the kernel's making (raw memory). The answer is then computed honestly: the case shows the
# route refused, statically (torch.SymInt, kNoCompile) and at run time (worker._refuse_symbolic_scalars:
# the `node` of SymInt, SymFloat and SymBool refuses, runtime.native_code).
import torch

walked_past_end = []


class Node:
    def __init__(self, box, first):
        self.box, self.first = box, first

    def is_int(self):
        if self.first and len(self.box) > 1:
            del self.box[1:]
        walked_past_end.append(len(self.box))
        return True


def solve(x, residual, weight):
    box = []
    kept = [torch.SymInt(Node(box, i == 0)) for i in range(4)]
    box.extend(kept)
    try:
        torch.ones(2).view(box)
    except RuntimeError:
        pass
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
