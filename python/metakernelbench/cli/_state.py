"""Options shared by every command (set by the top-level callback), and the console."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Optional

from rich.console import Console

suite_root: Optional[Path] = None


def load_suite():
    from .. import load_suite as _load

    return _load(suite_root)


def console(stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when output goes to a file or pipe."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


#: Said by the help of every --json option: what a null number means.
JSON_NULLS = "Strict JSON: a number that is undefined (NaN) or infinite is null."


def strict(value: Any) -> Any:
    """`value` with every non-finite float (NaN, ±inf) replaced by None, so that it is strict JSON
    (RFC 8259 has no NaN or Infinity); numpy scalars become Python ones."""
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value


def print_json(value: Any, indent: int = 2) -> None:
    """Prints `value` as strict JSON (see strict) on stdout, and nothing else."""
    print(json.dumps(strict(value), indent=indent, allow_nan=False, default=str))
