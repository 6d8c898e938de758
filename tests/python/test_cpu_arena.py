"""The CPU judge's arena: the worker packs each reply's outputs into one shared segment of its own,
reused while they fit, and the host maps it once (values.CpuArena, CpuTransport). (The host's
inputs keep a segment per message: tests/adversarial case arena_prefetch_inputs.)"""

import os

import metakernelbench._core as _core
import pytest
import torch
from metakernelbench.judge import values


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
