"""Peak tensor memory of a computation, measured on the CPU: every storage an operator creates
is followed until it is freed. Used to estimate a problem's `peak_memory_bytes` without a GPU
(scripts/estimate-peak-memory.py, `mkb import upstream-problems` on the CPU); on a GPU, torch's
allocator statistics measure it directly (`cuda_peak_bytes`). A computation on the meta device
creates the same storages without memory or compute (`meta_peak_bytes`): for workloads a CPU
cannot hold or would take minutes over.

A full workload whose control flow depends on values (routing decisions, token counts per
expert) but whose large tensors (tens of GB of expert weights and their float64 anchor copies)
are too large for the CPU is traced with only those large tensors on the meta device
(`MixedMetaStorage`): they have a size and no values, so the trace counts them without the memory
or the compute, while the small tensors that steer control flow keep real values."""

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

    def track(self, out, skip: frozenset[int] = frozenset()) -> None:
        """Counts the storages of out's tensors not seen before (and not in skip; meta ones only
        with include_meta), then the peak. Storages are told apart by their StorageImpl
        (StorageWeakRef.cdata), which meta storages have too (their data pointers are all null)."""
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and (self.include_meta or t.device.type != "meta"):
                ref = StorageWeakRef(t.untyped_storage())
                known = self.storages.get(ref.cdata)
                # A freed storage's entry may linger until live() drops it; a new storage at
                # the same address replaces it.
                if (known is None or known[0].expired()) and ref.cdata not in skip:
                    self.storages[ref.cdata] = (ref, t.untyped_storage().nbytes())
        self.peak = max(self.peak, self.live())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.track(out)
        return out


# Multiply-adds of the matrix products MixedMetaStorage counts: (operand a, operand b) -> m * n * k.
_MATMUL_OPS = {
    torch.ops.aten.mm.default: lambda a, b: a.shape[0] * a.shape[1] * b.shape[1],
    torch.ops.aten.bmm.default: lambda a, b: a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2],
    torch.ops.aten.addmm.default: lambda bias, a, b: a.shape[0] * a.shape[1] * b.shape[1],
}


class MixedMetaStorage(LiveStorage):
    """LiveStorage for a computation partly on the meta device. An operator runs on the meta
    device (its tensor arguments moved there, values dropped) when one of them is already there,
    when its outputs would take at least `meta_bytes` together, or when it is a matrix product
    of at least `meta_macs` multiply-adds; otherwise it runs for real. Operators whose output
    shape depends on values (nonzero, unique, boolean indexing, item) need real arguments: the
    thresholds must leave every tensor that steers control flow real, and a data-dependent
    operator reached with a meta argument raises a RuntimeError saying so. An in-place operator
    on a real tensor with a meta argument leaves the real tensor's values as they were.

    Both kinds of storage are counted alike, so the peak is the one the computation would reach
    with every tensor real."""

    def __init__(self, meta_bytes: int, meta_macs: float = float("inf")):
        super().__init__(include_meta=True)
        self.meta_bytes = meta_bytes
        self.meta_macs = meta_macs

    @staticmethod
    def _to_meta(value):
        return value.to("meta") if isinstance(value, torch.Tensor) and value.device.type != "meta" else value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        on_meta = any(t.device.type == "meta" for t in tensors)
        # Factories (randn, zeros, empty, ...) name their device: try them on the meta device too.
        meta_kwargs = {**kwargs, "device": torch.device("meta")} if "device" in kwargs else kwargs
        meta_args = [
            self._to_meta(a) if not isinstance(a, (list, tuple)) else type(a)(self._to_meta(v) for v in a)
            for a in args
        ]
        meta_kwargs = {k: self._to_meta(v) for k, v in meta_kwargs.items()}
        moved = frozenset(
            StorageWeakRef(t.untyped_storage()).cdata
            for t in tree_flatten((meta_args, meta_kwargs))[0]
            if isinstance(t, torch.Tensor)
        )
        try:
            meta_out = func(*meta_args, **meta_kwargs)
        except Exception as error:  # noqa: BLE001 - an operator the meta device cannot run
            if on_meta:
                raise RuntimeError(
                    f"{func}: needs values, and an argument is on the meta device "
                    "(raise meta_bytes / meta_macs so that it stays real)"
                ) from error
            meta_out = None
        big = (
            meta_out is not None
            and sum(
                t.untyped_storage().nbytes() for t in tree_flatten(meta_out)[0] if isinstance(t, torch.Tensor)
            )
            >= self.meta_bytes
        )
        macs = _MATMUL_OPS.get(func)
        heavy = macs is not None and macs(*(a for a in args if isinstance(a, torch.Tensor))) >= self.meta_macs
        if meta_out is not None and (on_meta or big or heavy):
            self.track(meta_out, moved)
            first = func._schema.arguments[0] if func._schema.arguments else None
            if first is not None and first.alias_info is not None and first.alias_info.is_write:
                return args[0]  # in place: the tensor the caller holds, real or meta
            return meta_out
        out = func(*args, **kwargs)
        self.track(out)
        return out


def cpu_peak_bytes(
    fn: Callable[[], Any], meta_bytes: int | None = None, meta_macs: float = float("inf")
) -> int:
    """The most tensor bytes alive at once while fn() runs (and its result, until it is dropped).
    With meta_bytes, large tensors and heavy matrix products go to the meta device
    (MixedMetaStorage)."""
    tracker = LiveStorage() if meta_bytes is None else MixedMetaStorage(meta_bytes, meta_macs)
    with torch.no_grad(), tracker:
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
