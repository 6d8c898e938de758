"""
CUDA IPC, synchronisation and device comparisons of the judge.
"""
from __future__ import annotations
import collections.abc
import metakernelbench._core
import typing
import typing_extensions
__all__: list[str] = ['CallClock', 'DeviceBuffer', 'L2Flusher', 'LaunchMonitor', 'NvmlSampler', 'Tracer', 'bytes_from', 'copy_bandwidth', 'device_capsule', 'device_count', 'device_synchronize', 'driver_version', 'ipc_close', 'ipc_export', 'ipc_open']
class CallClock:
    """
    The published method's clock in the judge's own code (device.h): Python code in the process cannot replace it as it can replace torch.cuda.Event's methods.
    """
    def __init__(self, device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def start(self) -> None:
        """
        time()'s first half, for a window that is not one Python call: synchronise, start event.
        """
    def stop(self) -> float:
        """
        time()'s second half: synchronise, end event, synchronise; seconds since start().
        """
    def time(self, fn: collections.abc.Callable) -> tuple[float, typing.Any]:
        """
        (seconds, fn()): synchronise, start event, fn(), synchronise, end event, synchronise; the events' elapsed time. fn's exception propagates.
        """
class DeviceBuffer:
    """
    Device memory in an allocation of its own: its IPC handle maps nothing else.
    """
    def __init__(self, bytes: typing.SupportsInt | typing.SupportsIndex, device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def capsule(self) -> typing_extensions.CapsuleType:
        """
        A DLPack capsule of uint8[bytes] over the buffer (valid while the buffer lives).
        """
    def ipc_handle(self) -> bytes:
        ...
    @property
    def bytes(self) -> int:
        ...
    @property
    def device(self) -> int:
        ...
    @property
    def ptr(self) -> int:
        ...
class LaunchMonitor:
    """
    CUPTI callbacks attributing every kernel launch to its module's loader (the DSL, a raw driver-API module, the CUDA runtime's libraries, the judge); the knockout.
    """
    def __init__(self, cupti_dirs: collections.abc.Sequence[str] = [], dsl_native_dirs: collections.abc.Sequence[str] = []) -> None:
        ...
    def begin_call(self, knockout: bool = False) -> None:
        ...
    def end_call(self) -> metakernelbench._core.Message:
        ...
    def enter_dsl_loader(self) -> None:
        ...
    def enter_judge(self) -> None:
        ...
    def entry_runner(self, original: typing.Any) -> collections.abc.Callable:
        """
        run(args, kwargs): original(*args, **kwargs) with the monitor told that what loads meanwhile is the DSL's. A C++ function: whoever reaches it (through the wrapper the worker puts in the DSL) finds neither the monitor nor the worker, and can only call `original` with it.
        """
    def leave_dsl_loader(self) -> None:
        ...
    def leave_judge(self) -> None:
        ...
    def set_enabled(self, enabled: bool) -> None:
        ...
    @property
    def background_launches(self) -> int:
        ...
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
    def end(self, monitor: LaunchMonitor = None) -> metakernelbench._core.Message:
        """
        Drains the call's records; with a launch monitor, each record gets its origin.
        """
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
def bytes_from(ptr: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    The bytes of the allocation holding device pointer ptr (an IPC mapping's too) from ptr to its end: how far a handle may reach, whatever its sender claimed.
    """
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
