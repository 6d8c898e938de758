#!/usr/bin/env python3
"""Estimates a problem's `peak_memory_bytes` on the CPU: the most tensor memory alive at once
while one judged draw is prepared the way tests/python/test_references.py measures it on a GPU
(inputs, a private copy for the call, the reference at the input dtypes, the float64 anchor
inputs and the anchor run). Every storage an operator creates is followed until it is freed.

The GPU's caching allocator rounds blocks up and cuBLAS takes a workspace, so the figure written
into problem.textproto is this estimate with a margin (--margin); a GPU run of
`pytest -m gpu tests/python/test_references.py` then checks the measured peak against it.

    scripts/estimate-peak-memory.py 19 20 [--workload full] [--margin 1.3] [--write] [--device meta]

--device meta traces the same draw on the meta device (the same operators and storages, without
the memory or the compute), for workloads a CPU cannot hold or would take minutes over; the
reference must not read tensor values on the host (e.g. with .item()).

With --write, the estimate replaces the workload's `peak_memory_bytes:` line in problem.textproto,
with a comment saying where it came from (so that a GPU measurement can replace it).
"""

from __future__ import annotations

import argparse
import re

import metakernelbench as mkb
from metakernelbench.judge import values
from metakernelbench.peak_memory import cpu_peak_bytes, meta_peak_bytes


def estimate(problem, workload: str, device: str = "cpu") -> int:
    def draw():
        inputs = problem.make_inputs(workload, device=device, seed=0)
        expected = problem.correctness_reference(*[values.clone(x) for x in inputs])
        anchor = problem.correctness_reference(*values.upcast(inputs))
        return inputs, expected, anchor

    return (meta_peak_bytes if device == "meta" else cpu_peak_bytes)(draw)


def write_estimate(problem, workload: str, value: int, margin: float, device: str = "cpu") -> None:
    """Replaces the workload's peak_memory_bytes line in problem.textproto."""
    path = problem.directory / "problem.textproto"
    text = path.read_text()
    block = re.search(r'workloads \{\s*name: "' + re.escape(workload) + r'"', text)
    if block is None:
        raise SystemExit(f"{path}: no workload {workload!r}")
    line = re.compile(r"  peak_memory_bytes: \d+[^\n]*")
    found = line.search(text, block.end())
    where = "CPU" if device == "cpu" else f"{device}-device"
    comment = f"# {where} estimate x{margin:g} (scripts/estimate-peak-memory.py)"
    if workload == "full":
        comment += "; refresh with the H200's measurement"
    text = text[: found.start()] + f"  peak_memory_bytes: {value}  {comment}" + text[found.end() :]
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problems", nargs="+")
    parser.add_argument("--workload", default="all", help="full, small or all")
    parser.add_argument("--margin", type=float, default=1.3)
    parser.add_argument("--write", action="store_true", help="write the estimate into problem.textproto")
    parser.add_argument("--device", default="cpu", choices=["cpu", "meta"], help="where the draw is traced")
    args = parser.parse_args()
    suite = mkb.load_suite()
    workloads = ["full", "small"] if args.workload == "all" else [args.workload]
    for key in args.problems:
        problem = suite.find(key)
        for workload in workloads:
            peak = estimate(problem, workload, args.device)
            value = int(peak * args.margin)
            print(
                f"{problem.number:02d} {workload}: live peak {peak} B ({peak / 2**20:.1f} MiB); "
                f"peak_memory_bytes: {value}"
            )
            if args.write:
                write_estimate(problem, workload, value, args.margin, args.device)


if __name__ == "__main__":
    main()
