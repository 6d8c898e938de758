"""Where one evaluation's time goes: problem 28's shipped CuTe DSL solution (or, on the CPU, an
honest eager kernel) judged with the default protocol, the first evaluation of the process cold
(the DSL's host template starts and imports torch and the DSL) and the next ones warm (a host
forked from that template), split into waiting for the host, worker start and prepare, the eager
baseline, the channel's calibration, import, correctness (with the knockout draw) and timing;
then a host template's imports timed one by one in a fresh process (`template_imports`).

    python benchmarks/judge_evaluation/run.py --out results.json [--device cuda] [--repeats 3] [--pin-cpu N]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from pathlib import Path

import metakernelbench as mkb

ROOT = Path(__file__).resolve().parents[2]
EAGER_KERNEL = ROOT / "tests/adversarial/kernels/honest_rmsnorm.py"


def _shown(path: Path) -> str:
    """The kernel's path as a reader finds it: relative to the checkout, or to the installed
    package's folder (the GPU machine runs an installed copy), else as it is."""
    for base in (ROOT, Path(mkb.__file__).resolve().parent):
        try:
            return str(path.resolve().relative_to(base))
        except ValueError:
            continue
    return str(path)


# What a cold evaluation's host template spends its start on, in a fresh process: the imports a
# template makes (torch, the judge's modules, then worker.preimport's lazy modules one by one).
_IMPORT_SPLIT = r"""
import importlib, json, sys, time
t = [time.perf_counter()]
from metakernelbench import toolchains
toolchains.activate(toolchains.site_dirs(sys.argv[1]))
t.append(time.perf_counter())
import torch
t.append(time.perf_counter())
import metakernelbench.judge.host
from metakernelbench.judge import worker
t.append(time.perf_counter())
lazy = {}
for name in (*worker._TORCH_LAZY_IMPORTS, *worker._DSL_LAZY_IMPORTS.get(sys.argv[1], ())):
    a = time.perf_counter()
    try:
        importlib.import_module(name)
    except Exception as e:
        lazy[name + " (failed)"] = str(e)[:100]
    lazy[name] = time.perf_counter() - a
print(json.dumps({"activate_s": t[1] - t[0], "torch_s": t[2] - t[1], "judge_modules_s": t[3] - t[2],
                  "lazy_s": lazy}))
"""


def _template_import_split(dsl: str) -> dict:
    """The template's imports timed in a fresh interpreter (its start and exit included in
    process_s): where a cold evaluation's wait for its host goes."""
    import subprocess
    import sys

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _IMPORT_SPLIT, dsl], capture_output=True, text=True)
    process = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": done.stderr[-500:], "process_s": process}
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": process}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pin-cpu", type=int, default=None, help="the judge's config pin_cpu")
    args = parser.parse_args()
    problem = mkb.load_suite().find(28)
    import torch

    gpu = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    kernel = Path(problem.directory) / "solutions" / "cutedsl.py" if gpu else EAGER_KERNEL
    config: dict = {} if gpu else {"policy": {"require_dsl": False}}
    if args.pin_cpu is not None:
        config["pin_cpu"] = args.pin_cpu
    rows = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        verdict = mkb.evaluate(problem, "cutedsl", path=kernel, device=args.device, config=config)
        wall = time.perf_counter() - start
        phases = verdict.phase_times.to_dict()
        rows.append(
            {
                "repeat": repeat,
                "warm": repeat > 0,
                "status": verdict.status,
                "speedup_vs_eager": verdict.speedup_vs_eager,
                "speedup_span": verdict.speedup_span,
                "message": verdict.message,
                "kernel_median_ms": verdict.kernel_parity.median_ms if verdict.kernel_parity else None,
                "eager_median_ms": verdict.eager_parity.median_ms if verdict.eager_parity else None,
                "kernel_span_ms": verdict.kernel_span.median_ms if verdict.kernel_span else None,
                "kernel_span_cv": verdict.kernel_span.cv if verdict.kernel_span else None,
                "span_samples": verdict.kernel_span.samples if verdict.kernel_span else None,
                "wall_s": wall,
                "host_start_s": wall - phases["total_s"],
                **phases,
            }
        )
        print(
            f"repeat {repeat} ({'warm' if repeat else 'cold'}): {verdict.status}, wall {wall:.2f} s = "
            "host start "
            f"{wall - phases['total_s']:.2f} s + worker start {phases['startup_s']:.2f}"
            f" + eager {phases.get('eager_s', 0):.2f} + calibration {phases.get('calibration_s', 0):.2f}"
            f" + import {phases['import_s']:.2f}"
            f" + correctness {phases['correctness_s']:.2f} + timing {phases['timing_s']:.2f}"
            f"; speedup {verdict.speedup_vs_eager} (span {verdict.speedup_span})"
        )
        steps = phases.get("steps", {})
        print("  steps: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(steps.items())))
    split = _template_import_split("cutedsl")
    print("template imports, fresh process: " + json.dumps(split))
    env = verdict.environment.to_dict()
    result = {
        "benchmark": "judge_evaluation",
        "date": date.today().isoformat(),
        "gpu": env.get("gpu_name") or "cpu",
        "kernel": _shown(kernel),
        "device": env.get("device"),
        "workload": verdict.workload,
        "torch": env.get("torch_version"),
        "host": platform.node(),
        # mkb.evaluate forks each host from a host template per DSL (started by repeat 0).
        "host_template": True,
        **({"pin_cpu": args.pin_cpu} if args.pin_cpu is not None else {}),
        "rows": rows,
        "template_imports": split,
    }
    args.out.write_text(json.dumps(result, indent=2))
    return 0 if all(r["status"] == "passed" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
