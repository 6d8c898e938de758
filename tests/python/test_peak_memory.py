"""peak_memory's storage tracker: what a draw keeps alive at once, on the CPU and on the meta
device (the latter for workloads a CPU cannot hold)."""

import pytest
import torch
from metakernelbench.peak_memory import cpu_peak_bytes, meta_peak_bytes

MIB = 1 << 20


def _draw(device):
    def fn():
        x = torch.randn(256, 1024, device=device)  # 1 MiB
        y = (x @ x.t()).exp()  # 256 KiB, a temporary in between
        return x, y * 2
    return fn


def test_a_meta_draw_keeps_the_same_storages_alive_as_a_cpu_draw():
    assert cpu_peak_bytes(_draw("cpu")) == meta_peak_bytes(_draw("meta")) == MIB + 2 * 256 * 1024


def test_meta_storages_are_not_counted_in_a_cpu_measurement():
    assert cpu_peak_bytes(_draw("meta")) == 0


@pytest.mark.parametrize("nbytes", [16 * 1024, MIB])
def test_a_storage_allocated_in_place_of_a_freed_one_is_counted(nbytes):
    # The next storage often takes the freed one's memory (and its key) before the tracker has
    # swept the freed one out; it must still be followed.
    def fn():
        kept = []
        for _ in range(4):
            freed = torch.empty(nbytes // 4)
            del freed
            kept.append(torch.empty(nbytes // 4))
        return kept

    assert cpu_peak_bytes(fn) == 4 * nbytes
