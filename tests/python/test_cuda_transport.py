"""The GPU transports (judge/values.py): the worker's input buffer, which the host writes each
call's inputs into through a CUDA IPC mapping while the kernel reads them from memory local to
its process, and the bounds a received handle may reach. The other process is a child holding a
device buffer of its own, as the worker does. On a GPU only."""

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

_OWNER = """
import sys
import torch
from metakernelbench import _core
torch.cuda.set_device(0)
buffer = _core.cuda.DeviceBuffer(int(sys.argv[1]), 0)
print(buffer.ipc_handle().hex(), buffer.bytes, flush=True)
for line in sys.stdin:  # "read OFFSET N": N int32 at OFFSET of the buffer, as this process sees them
    _, offset, n = line.split()
    raw = torch.from_dlpack(buffer.capsule())
    print(raw[int(offset) : int(offset) + 4 * int(n)].view(torch.int32).tolist(), flush=True)
"""


class _Owner:
    """A child process holding a DeviceBuffer of `nbytes` (the worker's side)."""

    def __init__(self, nbytes: int):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _OWNER, str(nbytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        handle, size = self.proc.stdout.readline().split()
        self.handle, self.bytes = bytes.fromhex(handle), int(size)

    def read(self, offset: int, n: int) -> list[int]:
        self.proc.stdin.write(f"read {offset} {n}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())  # a list of ints printed by the child

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def _core():
    from metakernelbench import _core

    if not _core.built_with_cuda:
        pytest.skip("the core was built without CUDA")
    return _core


class _Reply:
    def __init__(self, handle: bytes, nbytes: int):
        self.cuda_ipc_handle, self.nbytes, self.device_index = handle, nbytes, 0


def test_the_host_writes_inputs_into_the_workers_own_buffer():
    """What the host packs lands in the other process's allocation, where that process reads it;
    a later call that fits reuses the buffer without asking again."""
    _core()
    from metakernelbench.judge import values

    owner = _Owner(1 << 20)
    asked = []

    def reserve(nbytes):
        asked.append(nbytes)
        return _Reply(owner.handle, owner.bytes)

    buffer = values.WorkerInputBuffer(reserve, 0)
    try:
        a = torch.arange(8, dtype=torch.int32, device="cuda")
        handles, fds, view = buffer.export([a, 3.5])
        assert fds == [] and view[1] == 3.5 and asked == [32]
        assert bytes(handles[0]["cuda_ipc_handle"]) == owner.handle
        assert owner.read(handles[0]["cuda_offset"], 8) == list(range(8))
        assert torch.equal(view[0], a)  # the host's view of the same memory
        buffer.export([a + 100])
        assert owner.read(0, 8) == [100 + k for k in range(8)] and asked == [32]
        assert buffer.nbytes == owner.bytes
    finally:
        buffer.close()
        owner.close()


def test_a_buffer_smaller_than_reserved_is_refused():
    """The mapping's size is the driver's, not the reply's: a buffer smaller than the inputs is
    an error, never a copy past its end."""
    core = _core()
    from metakernelbench.judge import values

    owner = _Owner(4096)
    buffer = values.WorkerInputBuffer(lambda nbytes: _Reply(owner.handle, 1 << 30), 0)
    try:
        with pytest.raises(core.InvalidArgumentError, match="not the"):
            buffer.export([torch.zeros(1 << 20, dtype=torch.int32, device="cuda")])
    finally:
        buffer.close()
        owner.close()


def test_a_received_handle_may_not_reach_outside_its_allocation():
    """A handle whose offset and size reach past the allocation it names is refused before any
    read (the host would otherwise read another allocation's memory, or fault)."""
    core = _core()
    from metakernelbench.judge import values

    owner = _Owner(4096)
    transport = values.CudaTransport()
    meta = values.tensor_meta(torch.zeros(1024, dtype=torch.int32))
    try:
        inside = {"meta": meta, "cuda_ipc_handle": owner.handle, "cuda_offset": 0, "nbytes": 4096}
        (t,), _ = transport.open([core.message("TensorHandle", inside)], [], writable=False)
        assert t.numel() == 1024
        # The driver ranges the IPC mapping (else the bound below would be the sender's claim).
        assert core.cuda.bytes_from(transport._opened[owner.handle]) >= 4096
        outside = {**inside, "cuda_offset": 2048}
        with pytest.raises(core.InvalidArgumentError, match="outside its allocation"):
            transport.open([core.message("TensorHandle", outside)], [], writable=False)
    finally:
        transport.close()
        owner.close()
