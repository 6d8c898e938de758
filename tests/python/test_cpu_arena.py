"""The CPU judge's arenas: each side packs what it sends (the host's inputs, the worker's outputs)
into one shared segment of its own, reused while the data fits, and the receiver maps it once
(values.CpuArena, CpuTransport). Memory reused from call to call is written only after the worker
has released the last call's objects (Session.release; tests/adversarial case
arena_prefetch_inputs)."""

import os

import metakernelbench._core as _core
import pytest
import torch
from metakernelbench.judge import values
from metakernelbench.judge.session import Session


def _send(arena, receiver, items, writable=False):
    handles, fds, holder = arena.export(items)
    sent = [os.dup(fd) for fd in fds]  # as the channel's SCM_RIGHTS passes a copy
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles})
    opened, keep = receiver.open(list(request.inputs), sent, writable=writable, scalars=True)
    return opened, keep, holder


def test_a_segment_is_reused_while_the_data_fits_and_mapped_once():
    arena, receiver = values.CpuArena(), values.CpuTransport()  # a receiver that maps it writable
    a = torch.arange(12, dtype=torch.float32).view(3, 4)
    opened, keep, holder = _send(arena, receiver, [a, 0.5], writable=True)
    assert torch.equal(opened[0], a) and opened[1] == 0.5
    b = torch.full((2, 5), 7, dtype=torch.int32)  # smaller: the same segment, the same mapping
    opened2, keep2, holder2 = _send(arena, receiver, [b], writable=True)
    assert holder2[0] is holder[0]
    assert keep2[0] is keep[0]
    assert torch.equal(opened2[0], b)
    # The receiver's view and the sender's are one memory: a write on either side is seen.
    opened2[0].add_(1)
    assert torch.equal(values.CpuTransport().views(holder2, [b])[0], b + 1)


def test_a_larger_message_moves_both_sides_to_a_new_segment():
    arena, receiver = values.CpuArena(), values.CpuTransport()
    _, keep, holder = _send(arena, receiver, [torch.zeros(4)])
    big = torch.randn(1 << 16)
    opened, keep2, holder2 = _send(arena, receiver, [big])
    assert holder2[0] is not holder[0] and keep2[0] is not keep[0]
    assert torch.equal(opened[0], big)
    # Then smaller again: still the large segment.
    opened3, keep3, _ = _send(arena, receiver, [torch.ones(3)])
    assert keep3[0] is keep2[0] and torch.equal(opened3[0], torch.ones(3))


def test_a_handle_past_the_reused_segment_is_refused():
    arena, receiver = values.CpuArena(), values.CpuTransport()
    _send(arena, receiver, [torch.zeros(8)])
    handles, fds, _ = arena.export([torch.zeros(8)])
    handles[0]["segment_offset"] = 1 << 20
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles})
    with pytest.raises(_core.InvalidArgumentError, match="outside its segment"):
        receiver.open(list(request.inputs), [os.dup(fds[0])], writable=False, scalars=True)


class _Worker:
    """A channel and supervisor standing in for a worker: records what reaches it, in order."""

    def __init__(self, events: list):
        self.events = events
        self._last = None

    def send(self, data, fds):
        request = _core.parse_message("WorkerRequest", data)
        self.events.append(request.op)
        self._last = request.id

    def receive(self, timeout_s):
        return _core.message("WorkerReply", {"id": self._last, "ok": True}).serialize(), []

    def cpu_sample(self):
        return (0, 0, 0)

    def kill(self, timed_out=False):
        self.events.append("killed")


class _Inputs(values.CpuArena):
    def __init__(self, events: list, reused: bool):
        super().__init__()
        self.events, self.reused = events, reused

    def export(self, items):
        self.events.append("inputs written")
        return super().export(items)


@pytest.mark.parametrize("reused", [True, False])
def test_reused_input_memory_is_written_only_after_the_worker_released_the_last_call(reused):
    events: list = []
    worker = _Worker(events)
    session = Session(worker, worker, values.CpuTransport(), 5.0)
    session.inputs = _Inputs(events, reused)
    x = torch.ones(4)
    for op in ("calibrate", "call", "time_kernel"):
        _, fds, _, _ = session.request(op, [x])
        for fd in fds:
            os.close(fd)
    session.request("shutdown")
    if reused:
        # Each call's inputs after a RELEASE, except the first's (no call's objects yet).
        assert events == [
            "inputs written", "calibrate",
            "release", "inputs written", "call",
            "release", "inputs written", "time_kernel",
            "shutdown",
        ]  # fmt: skip
    else:
        assert "release" not in events  # a segment per message: nothing to wait for


def test_a_failed_release_loses_the_worker():
    events: list = []
    worker = _Worker(events)
    worker.receive = lambda timeout_s: (
        _core.message("WorkerReply", {"id": worker._last, "ok": False, "error": "no"}).serialize(),
        [],
    )
    session = Session(worker, worker, values.CpuTransport(), 5.0)
    session.inputs = _Inputs(events, True)
    session.request("call", [torch.ones(2)])
    from metakernelbench.judge.session import WorkerLost

    with pytest.raises(WorkerLost, match="did not release"):
        session.request("call", [torch.ones(2)])
    assert events[-2:] == ["release", "killed"]


def test_a_received_segment_is_identified_by_fstat_in_cpp():
    # The worker's main thread names each call's segment by (st_dev, st_ino) from fstat(2) in C++:
    # os.fstat builds its result through the posix module's state, which a kernel with raw memory
    # rewrote to run its work on that thread (six red-team rounds, 2026-12-07).
    import os

    segment = _core.SharedSegment.create(4096)
    st = os.fstat(segment.fd)
    assert _core.SharedSegment.identity(segment.fd) == (st.st_dev, st.st_ino)
    other = _core.SharedSegment.create(4096)
    assert _core.SharedSegment.identity(other.fd) != _core.SharedSegment.identity(segment.fd)
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.close(write_end)
    with pytest.raises(OSError):
        _core.SharedSegment.identity(read_end)  # closed: names nothing
