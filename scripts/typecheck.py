#!/usr/bin/env python3
"""The type check of `make lint`: mypy over the Python package, against a baseline that only
shrinks (scripts/mypy-baseline.json: error count per file and error code).

    scripts/typecheck.py            fails (exit 1) when a file has more errors of a code than the
                                    baseline allows; says so when it has fewer
    scripts/typecheck.py --update   writes the baseline from this run (only ever to shrink it:
                                    a count that would grow is refused; without a baseline file,
                                    this run's counts become it)
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "mypy-baseline.json"
PACKAGE = "python/metakernelbench"
# path:line: error: message  [code]
_ERROR = re.compile(r"^(?P<path>[^:]+):\d+: error: .*\[(?P<code>[a-z0-9-]+)\]$")


def run_mypy() -> collections.Counter:
    command = [
        sys.executable,
        "-m",
        "mypy",
        PACKAGE,
        "--ignore-missing-imports",
        "--follow-imports=silent",
        "--no-error-summary",
        "--show-error-codes",
        "--no-pretty",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"typecheck: mypy failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    counts: collections.Counter = collections.Counter()
    for line in done.stdout.splitlines():
        m = _ERROR.match(line.strip())
        if m:
            counts[f"{m['path']} [{m['code']}]"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="write the (shrunk) baseline")
    args = parser.parse_args()
    counts = run_mypy()
    try:
        baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    except json.JSONDecodeError as error:
        sys.exit(f"typecheck: {BASELINE}: not JSON ({error})")
    grown = {k: (v, baseline.get(k, 0)) for k, v in counts.items() if v > baseline.get(k, 0)}
    shrunk = {k: (counts.get(k, 0), v) for k, v in baseline.items() if counts.get(k, 0) < v}
    if args.update:
        if grown and BASELINE.is_file():
            print("typecheck: refusing to grow the baseline:", file=sys.stderr)
            for k, (now, allowed) in sorted(grown.items()):
                print(f"  {k}: {now} errors, baseline {allowed}", file=sys.stderr)
            return 1
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
        print(f"typecheck: baseline written ({sum(counts.values())} errors in {len(counts)} entries)")
        return 0
    if grown:
        print("typecheck: new mypy errors (fix them; the baseline only shrinks):", file=sys.stderr)
        for k, (now, allowed) in sorted(grown.items()):
            print(f"  {k}: {now} errors, baseline {allowed}", file=sys.stderr)
        print(
            f"run: {sys.executable} -m mypy {PACKAGE} --ignore-missing-imports --follow-imports=silent",
            file=sys.stderr,
        )
        return 1
    if shrunk:
        print(f"typecheck: {len(shrunk)} baseline entries shrank; keep it so: scripts/typecheck.py --update")
    print(f"typecheck: {sum(counts.values())} errors, none beyond the baseline ({sum(baseline.values())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
