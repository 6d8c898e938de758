"""The host's side of the channel to its worker (SPEC §3): requests with deadlines, what counts as
losing the worker, and the framing of the host's own protocol with mkb::Judge (a length-prefixed
request on stdin; the HMAC-tagged verdict frame on the reply fd)."""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
import time

from .. import _core

FRAME_MAGIC = b"MKB1"


class WorkerLost(Exception):
    """The worker died, stopped answering, or broke the protocol."""


class ChannelForged(WorkerLost):
    """A message on the channel failed authentication: code in the worker wrote to it."""


def cpu_deltas(before, after, round_trip_s: float) -> dict:
    """The CPU time (ms) between two ProcessSupervisor.cpu_sample readings: the kernel's thread,
    the main thread, and every other thread (the process's less those two)."""
    process, main, kernel = (b - a for a, b in zip(before, after))
    if before[2] < 0 or after[2] < 0:
        # The kernel's thread is gone (it lives as long as an honest worker): counted as having
        # run the whole round trip, which no report outside the clock explains.
        kernel = int(round_trip_s * 1e9)
    return {
        "kernel_thread": kernel * 1e-6,
        "main_thread": main * 1e-6,
        "other_threads": max(0, process - main - max(kernel, 0)) * 1e-6 if before[0] else 0.0,
    }


# The requests after which the worker holds objects of the call's (its inputs, what solve
# returned) until the next request: kernel code (a finaliser) may run when they go.
HOLDING_OPS = ("calibrate", "call", "warmup", "time_kernel")


class Session:
    """The host's side of one worker: requests, deadlines, and what counts as losing it."""

    def __init__(self, channel, supervisor, transport, call_timeout_s: float):
        self.channel = channel
        self.supervisor = supervisor
        self.transport = transport  # opens what the worker exports
        self.inputs = transport  # packs what the worker gets (CUDA: an arena of its own)
        self.call_timeout_s = call_timeout_s
        # The evaluation's end (time.perf_counter), set by the host from total_timeout_s: no
        # request waits past it, so that a kernel slow on every call (each well inside
        # call_timeout_s) gets its timeout verdict instead of a host its caller must kill.
        self.deadline: float | None = None
        self.total_timeout_s = 0.0
        self._next_id = 1
        # The worker's CPU time over the last request's round trip (ms), from the kernel's
        # accounting (ProcessSupervisor.cpu_sample): its kernel thread's, its main thread's and
        # every other thread's (those that started and ended within the call included), which
        # AcceptReportedTimes holds the worker's clock to where the worker has one CPU.
        self.last_cpu_ms = {"kernel_thread": 0.0, "main_thread": 0.0, "other_threads": 0.0}
        # Where the findings of a RELEASE's reply go (the host's verdict builder).
        self.on_findings = None
        self._holding = False  # the worker holds the last call's objects

    def release(self) -> None:
        """RELEASE: the worker drops the last call's objects and holds its collector until the
        next call, before the host writes that call's inputs into memory the worker reuses from
        call to call (worker.Worker._release says why)."""
        reply, fds, _, _ = self.request("release")
        for fd in fds:
            os.close(fd)
        self._holding = False
        if self.on_findings is not None and reply.findings:
            self.on_findings(list(reply.findings))
        if not reply.ok:
            self.supervisor.kill()
            raise WorkerLost(f"the worker did not release the last call: {reply.judge_error or reply.error}")

    def request(self, op: str, inputs=(), timeout_s: float | None = None, **fields):
        """Sends one request; returns (reply, fds, holder, round_trip_s). The round trip is the
        host's own clock from the send to the reply."""
        if inputs and self._holding and getattr(self.inputs, "reused", False):
            # Before the inputs are written: a finaliser of the kernel's that runs when the
            # worker lets the last call's objects go must find the memory as that call left it.
            self.release()
        handles, fds, holder = self.inputs.export(list(inputs)) if inputs else ([], [], None)
        request_id = self._next_id
        self._next_id += 1
        message = _core.message("WorkerRequest", {"op": op, "id": request_id, "inputs": handles, **fields})
        data = message.serialize()
        before = self.supervisor.cpu_sample()
        start = time.perf_counter()
        try:
            self.channel.send(data, fds)
        except _core.UnavailableError as gone:
            raise WorkerLost("the worker closed its channel") from gone
        reply, reply_fds = self.wait(request_id, timeout_s or self.call_timeout_s, bounded=op != "shutdown")
        round_trip = time.perf_counter() - start
        if op in HOLDING_OPS:
            self._holding = True
        self.last_cpu_ms = cpu_deltas(before, self.supervisor.cpu_sample(), round_trip)
        return reply, reply_fds, holder, round_trip

    def wait(self, request_id: int, timeout_s: float, bounded: bool = True):
        """The reply to `request_id`, within `timeout_s` and (when `bounded`) the evaluation's
        deadline."""
        why = f"no answer within {timeout_s:g} s"
        if bounded and self.deadline is not None:
            left = self.deadline - time.perf_counter()
            if left < timeout_s:
                timeout_s = max(left, 0.001)
                why = f"the evaluation's total time (total_timeout_s = {self.total_timeout_s:g} s) ran out"
        try:
            data, fds = self.channel.receive(timeout_s)
        except _core.DeadlineExceededError:
            self.supervisor.kill(timed_out=True)
            raise WorkerLost(why) from None
        except _core.UnavailableError:
            raise WorkerLost("the worker died") from None
        except _core.PermissionDeniedError:
            self.supervisor.kill()
            raise ChannelForged(
                "a message on the judge's channel was not the worker harness's "
                "(the kernel wrote to the channel)"
            ) from None
        except _core.InvalidArgumentError as error:
            # A message over the channel's limit (the harness never sends one: its replies are
            # packed in shared memory): written by the kernel, e.g. numpy's tofile on a dup of
            # the channel's descriptor (red team, 2026-12-05 night: the host died on this error
            # and the evaluation failed as the judge's).
            self.supervisor.kill()
            raise ChannelForged(
                f"a message on the judge's channel was not the worker harness's ({error}; "
                "the kernel wrote to the channel)"
            ) from None
        except _core.Error as error:  # any other failure to read the worker's end
            self.supervisor.kill()
            raise WorkerLost(f"the worker's channel failed: {error}") from None
        try:
            reply = _core.parse_message("WorkerReply", data)
        except _core.Error:
            self.supervisor.kill()
            raise WorkerLost("the worker sent a malformed message") from None
        if reply.id != request_id:
            self.supervisor.kill()
            raise WorkerLost(f"the worker answered request {reply.id}, not {request_id}") from None
        return reply, fds


def read_frame(stream) -> bytes:
    """One frame of the host protocol ("MKB1", uint32 length, payload) from a binary stream."""
    header = stream.read(8)
    if len(header) != 8 or header[:4] != FRAME_MAGIC:
        raise _core.InvalidArgumentError("the judge host expected a framed request on stdin")
    (length,) = struct.unpack("<I", header[4:])
    payload = stream.read(length)
    if len(payload) != length:
        raise _core.InvalidArgumentError("the judge host's request frame was cut short")
    return payload


def write_frame(fd: int, payload: bytes, key: bytes) -> None:
    tag = hmac.new(key, payload, hashlib.sha256).digest()
    with os.fdopen(fd, "wb") as reply:
        reply.write(FRAME_MAGIC + struct.pack("<I", len(payload)) + payload + tag)
