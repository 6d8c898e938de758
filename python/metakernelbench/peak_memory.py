"""Peak tensor memory of a computation, measured on the CPU: every storage an operator creates
is followed until it is freed. Used to estimate a problem's `peak_memory_bytes` without a GPU
(scripts/estimate-peak-memory.py, `mkb import upstream-problems` on the CPU); on a GPU, torch's
allocator statistics measure it directly (`cuda_peak_bytes`). A computation on the meta device
creates the same storages without memory or compute (`meta_peak_bytes`): for workloads a CPU
cannot hold or would take minutes over."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class LiveStorage(TorchDispatchMode):
    """While active, tracks the bytes of every storage created under it that is still alive;
    `peak` is the most seen at once (storages created before it are not counted). Meta storages
    are counted only with include_meta."""

    def __init__(self, include_meta: bool = False):
        super().__init__()
        self.include_meta = include_meta
        self.storages: dict[int, tuple[StorageWeakRef, int]] = {}
        self.peak = 0

    def live(self) -> int:
        dead = [key for key, (ref, _) in self.storages.items() if ref.expired()]
        for key in dead:
            del self.storages[key]
        return sum(n for _, n in self.storages.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and (self.include_meta or t.device.type != "meta"):
                storage = t.untyped_storage()
                key = storage._cdata  # the storage object: meta storages have no address
                known = self.storages.get(key)
                # A storage freed since the last sweep may have left its key to this one.
                if known is None or known[0].expired():
                    self.storages[key] = (StorageWeakRef(storage), storage.nbytes())
        self.peak = max(self.peak, self.live())
        return out


def cpu_peak_bytes(fn: Callable[[], Any]) -> int:
    """The most tensor bytes alive at once while fn() runs (and its result, until it is dropped)."""
    with torch.no_grad(), LiveStorage() as tracker:
        result = fn()
        del result
    return tracker.peak


def meta_peak_bytes(fn: Callable[[], Any]) -> int:
    """cpu_peak_bytes for a computation on the meta device (fn must not read tensor values)."""
    with torch.no_grad(), LiveStorage(include_meta=True) as tracker:
        result = fn()
        del result
    return tracker.peak


def cuda_peak_bytes(fn: Callable[[], Any]) -> int:
    """Device memory allocated at the peak of fn() beyond what was allocated before it."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    result = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del result
    torch.cuda.empty_cache()
    return peak
