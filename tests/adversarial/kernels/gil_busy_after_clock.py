# Red team round 6, the measurable half: time spent after solve returns by a thread of the
# kernel's whose target is C callables only (no frame of kernel.py runs, so the watch on kernel
# code sees nothing), woken by a lock solve releases as its last act and then holding the GIL,
# so that the worker's harness waits after the clock stopped. The output itself is honest: the
# case shows that the CPU judge's clock bound notices 100+ ms outside the clock per timed call
# (with a bound fraction of 1 it could never trip: a call's gap is its round trip less a report
# of no less than zero). The same thread finishing the output by a memcpy passed once at 0.97x
# against an honest 0.62x (it loses the race to the snapshot in most evaluations).
import collections
import functools
import itertools
import threading

import torch


def solve(hidden_states, residual, weight):
    total = hidden_states.float() + residual.float()
    inv_rms = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)
    out = (total * inv_rms * weight.float()).to(hidden_states.dtype)
    gate = threading.Lock()
    gate.acquire()
    # Wait for the gate (C, the GIL released), then about 0.5-1.5 s of C work holding the GIL.
    work = itertools.chain(map(gate.acquire, [True]), map(sum, [range(30_000_000)]))
    threading.Thread(target=functools.partial(collections.deque, work, 0), daemon=True).start()
    gate.release()
    return out
