"""The test process's children as /proc shows them (the judge's hosts and host templates)."""

from __future__ import annotations

import os


def state(pid: int) -> str | None:
    """A process's state letter (R, S, Z, ...), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def children(marker: bytes) -> list[int]:
    """This process's live children whose command line holds `marker` (a zombie's is empty)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and marker in cmdline:
            pids.append(int(entry))
    return sorted(pids)
