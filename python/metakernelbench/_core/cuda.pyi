"""
CUDA IPC, synchronisation and device comparisons of the judge.
"""
from __future__ import annotations
import collections.abc
import metakernelbench._core
import typing
import typing_extensions
__all__: list[str] = ['L2Flusher', 'NvmlSampler', 'Tracer', 'copy_bandwidth', 'device_capsule', 'device_count', 'device_synchronize', 'driver_version', 'ipc_close', 'ipc_export', 'ipc_open']
class Tracer:
    """
    CUPTI activity tracing of one call at a time (process-wide CUPTI).
    """
    def __init__(self, library_dirs: collections.abc.Sequence[str] = []) -> None:
        """
        Loads libcupti (searching library_dirs first) and starts kernel / memcpy / memset activity.
        FailedPreconditionError when another profiler holds CUPTI.
        """
    def begin(self) -> None:
        ...
    def end(self) -> metakernelbench._core.Message:
        ...
class NvmlSampler:
    """
    SM clock, temperature and throttle reasons of a GPU (NVML).
    """
    def __init__(self, device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def sample(self) -> dict:
        ...
    @property
    def driver_version(self) -> str:
        ...
    @property
    def index(self) -> int:
        """
        The GPU's NVML index on its machine (-1: unknown).
        """
    @property
    def uuid(self) -> str:
        """
        The GPU's UUID ('': unknown).
        """
class L2Flusher:
    """
    Evicts the L2 cache by writing a buffer twice its size.
    """
    def __init__(self, device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def flush(self, stream: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Flushes on `stream` (a cudaStream_t as int) and waits.
        """
    @property
    def bytes(self) -> int:
        ...
def copy_bandwidth(device: typing.SupportsInt | typing.SupportsIndex = 0) -> float:
    """
    Device-to-device copy bandwidth, bytes/s (read + written), best of 5 copies of 1 GiB.
    """
def device_capsule(ptr: typing.SupportsInt | typing.SupportsIndex, nbytes: typing.SupportsInt | typing.SupportsIndex, device: typing.SupportsInt | typing.SupportsIndex = 0) -> typing_extensions.CapsuleType:
    """
    A DLPack capsule of uint8[nbytes] at a device address (the memory is not owned).
    """
def device_count() -> int:
    """
    Visible CUDA devices (0 without a driver).
    """
def device_synchronize(device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
    """
    cudaDeviceSynchronize on `device` (all streams of this process). Blocks.
    """
def driver_version() -> str:
    """
    The driver's CUDA version, e.g. '13.0'.
    """
def ipc_close(base: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def ipc_export(ptr: typing.SupportsInt | typing.SupportsIndex) -> tuple[bytes, int]:
    """
    (IPC handle bytes, byte offset) of the allocation holding device pointer ptr.
    """
def ipc_open(handle: bytes, device: typing.SupportsInt | typing.SupportsIndex = 0) -> int:
    """
    Maps another process's allocation; returns its base address.
    """
