"""What the worker's runtime audit hook costs the code it watches: one audited event's time with
the hook installed against the same event with none, at several stack depths, in a fresh process
per configuration (the hook cannot be removed once installed).

Two events, both allowed, as they arise in a timed call of a DSL kernel:
- `ctypes.addressof` raised by the DSL's native layer inside an entry wrapper (the DSL's
  executor raises ctypes events in every call of a compiled kernel): the short walk to the
  entry wrapper decides it;
- `object.__getattr__` of `__code__`, decided on the full walk (every frame to the bottom).

The depth is the number of frames of the DSL's code between the entry wrapper and the event.
Each configuration reports the median per-event time over `--repeats` loops of `--events`
events, with the spread (min, max); the ratio is the hook's median over the bare median.
CPU only: what is measured is the interpreter's and the hook's work.

    python benchmarks/audit_hook/run.py --out results.json [--repeats 7] [--events 20000]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

# One configuration in a fresh process: a folder standing for a DSL's installed package (read-only
# to the audit, its executor's source mentions ctypes), the entry wrapper as the worker installs
# it, and the event raised at the bottom of `depth` frames of that package's code.
_CHILD = r"""
import ctypes, json, os, statistics, sys, sysconfig, time
root, event, depth, events, repeats, hooked = sys.argv[1:7]
depth, events, repeats, hooked = int(depth), int(events), int(repeats), hooked == "1"
executor = os.path.join(root, "dsl_pkg", "executor.py")
body = {"ctypes.addressof": "ctypes.addressof(c)", "object.__getattr__": "inner.__code__"}[event]
source = (
    "def inner(c, n):\n    for _ in range(n):\n        " + body + "\n"
    "def deep(d, c, n):\n    if d == 0:\n        return inner(c, n)\n    return deep(d - 1, c, n)\n"
)
namespace = {"ctypes": ctypes}
exec(compile(source, executor, "exec"), namespace)
from metakernelbench import _core
from metakernelbench.judge import dsl_entry
entry = dsl_entry.wrapper(None, namespace["deep"])
if hooked:
    _core.install_runtime_audit({
        "kernel_path": os.path.join(root, "kernel.py"), "dsl": "cutedsl",
        "dsl_roots": [os.path.join(root, "dsl_pkg")],
        "stdlib_roots": [sysconfig.get_paths()["stdlib"]],
        "code_roots": [os.path.dirname(os.path.dirname(_core.__file__))],
        "dsl_entry_file": dsl_entry.wrapper.__code__.co_filename,
        "dsl_entry_globals": dsl_entry.wrapper.__globals__,
    }, enforce=False)
    _core.runtime_audit_phase("import")
    _core.runtime_audit_phase("timing")
c = ctypes.c_void_p(5)
entry(depth, c, 1000)  # warm: the hook's caches, the interpreter's
per_event = []
for _ in range(repeats):
    start = time.perf_counter()
    entry(depth, c, events)
    per_event.append((time.perf_counter() - start) / events * 1e6)
refused = len(_core.runtime_audit_recorded()) if hooked else 0
print(json.dumps({"per_event_us": per_event, "would_refuse": refused}))
"""


def _measure(root: str, event: str, depth: int, events: int, repeats: int, hooked: bool) -> dict:
    args = [root, event, str(depth), str(events), str(repeats), "1" if hooked else "0"]
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"audit_hook: the child for {event} at depth {depth} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    samples = result["per_event_us"]
    return {
        "median_us": statistics.median(samples),
        "min_us": min(samples),
        "max_us": max(samples),
        "would_refuse": result["would_refuse"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where to write the JSON results")
    parser.add_argument("--repeats", type=int, default=7, help="loops per configuration")
    parser.add_argument("--events", type=int, default=20000, help="events per loop")
    parser.add_argument("--depths", type=int, nargs="+", default=[0, 25, 50])
    args = parser.parse_args()
    if args.repeats < 1 or args.events < 1 or any(d < 0 for d in args.depths):
        parser.error("--repeats and --events must be at least 1, --depths not negative")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mkb-audit-bench-") as root:
        Path(root, "dsl_pkg").mkdir()
        Path(root, "dsl_pkg", "executor.py").write_text("import ctypes\n")
        for event in ("ctypes.addressof", "object.__getattr__"):
            for depth in args.depths:
                bare = _measure(root, event, depth, args.events, args.repeats, hooked=False)
                hooked = _measure(root, event, depth, args.events, args.repeats, hooked=True)
                if hooked["would_refuse"]:
                    raise SystemExit(f"audit_hook: the hook would refuse {event}: not the allowed path")
                row = {
                    "event": event,
                    "depth": depth,
                    "bare": bare,
                    "hooked": hooked,
                    "hook_cost_us": hooked["median_us"] - bare["median_us"],
                    "ratio": hooked["median_us"] / bare["median_us"],
                }
                rows.append(row)
                print(
                    f"{event:20s} depth {depth:3d}: bare {bare['median_us']:.3f} us, "
                    f"hooked {hooked['median_us']:.3f} us "
                    f"[{hooked['min_us']:.3f}-{hooked['max_us']:.3f}] "
                    f"(+{row['hook_cost_us']:.3f} us an event)",
                    flush=True,
                )
    out = {
        "benchmark": "audit_hook",
        "date": date.today().isoformat(),
        "machine": platform.node(),
        "python": platform.python_version(),
        "repeats": args.repeats,
        "events": args.events,
        "rows": rows,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
