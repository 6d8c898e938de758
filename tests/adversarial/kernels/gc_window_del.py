# Work after the clock stops, in kernel.py's own frames, in the moment the watch on kernel code
# was still off (red team, round 5): a cyclic garbage collection timed to fire on the first
# counted allocation the harness makes once solve has returned (the free lists emptied, the
# generation-0 count topped up to its threshold inside solve), running a __del__ that computes
# the output; solve itself computes nothing. KernelThread turns the watch on before the clock
# stops, with the collector held off across the switch: the __del__ runs watched.
import collections
import itertools

import torch

_hold = []  # what the last call allocated, alive until the next call begins
_forever = []  # 2-tuples that keep the 2-tuple free list empty
_calls = [0]
_EMPTIES = [()] * 699


class _Tail:
    pass


class _Late:
    def __del__(self):
        x, r, w, out = self.args
        s = x.float() + r.float()
        inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
        out.copy_((s * inv * w.float()).to(out.dtype))


def _honest(x, residual, weight):
    s = x.float() + residual.float()
    inv = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5)
    return (s * inv * weight.float()).to(x.dtype)


def solve(x, residual, weight):
    _calls[0] += 1
    if _calls[0] <= 15:
        # The 5 correctness draws and the 10 warm-ups of the judge's published plan: honest (a
        # warm-up builds no counted object after solve returns that would collect in time).
        return _honest(x, residual, weight)
    _hold.clear()
    hold = []
    _hold.append(hold)
    out = torch.empty_like(x)
    batch = list(map(set, itertools.repeat((), 720)))
    mm = map(set, _EMPTIES)  # before the free list is emptied: map() frees its argument tuple
    # The 2-tuple free list emptied (nothing below frees a 2-tuple), so that the (seconds, out)
    # tuple the harness builds after its clock's stop is a counted allocation.
    _forever.append([(i, i) for i in range(2100 if _calls[0] == 16 else 200)])
    late = _Late()
    late.args = (x, residual, weight, out)
    late.me = late  # a cycle: only the collector frees it
    del late
    top = collections.deque()
    tail = _Tail()
    hold.append((out, mm, batch, top, tail))
    # 720 frees: the count is exactly 0 now (a free lowers it only while it is above 0).
    batch.clear()
    top.extend(mm)  # 699 counted allocations
    hold.append(tail)  # (no allocation)
    hold.append(_Tail())  # the 700th: the count is at the threshold
    return out
