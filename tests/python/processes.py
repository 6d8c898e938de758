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


def _live() -> list[tuple[int, int]]:
    """(pid, parent pid) of every process /proc shows that is not a zombie."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            out.append((int(entry), int(fields[1])))
    return out


def children(marker: bytes) -> list[int]:
    """This process's live children whose command line holds `marker` (a zombie's is empty)."""
    pids = []
    for pid, parent in _live():
        if parent != os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker in f.read():
                    pids.append(pid)
        except OSError:
            continue
    return sorted(pids)


def descendants(root: int) -> list[int]:
    """Every live process below `root` (the judge's templates, hosts and workers)."""
    below: dict[int, list[int]] = {}
    for pid, parent in _live():
        below.setdefault(parent, []).append(pid)
    found, frontier = [], [root]
    while frontier:
        for pid in below.get(frontier.pop(), []):
            found.append(pid)
            frontier.append(pid)
    return found


def allowed_cpus(pid: int) -> str | None:
    """The CPUs a process's threads may run on ("0-1"), "mixed" when they differ, or None when
    it is gone."""
    lists = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        lists.add(line.split(":", 1)[1].strip())
    except OSError:
        return None
    return lists.pop() if len(lists) == 1 else ("mixed" if lists else None)
