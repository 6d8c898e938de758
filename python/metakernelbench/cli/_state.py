"""What every command shares: the suite option (accepted before or after the subcommand), the
device option, the console, strict JSON, and escaping data for Rich markup. One definition each,
so that every command says and means the same."""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

suite_root: Path | None = None

SUITE_HELP = "Problem suite folder (default: the bundled suite; env MKB_SUITE)."


def load_suite():
    from .. import load_suite as _load

    return _load(suite_root)


def with_suite_option(command):
    """Adds --suite to a command that reads the suite, so that `mkb problems list --suite DIR`
    works as `mkb --suite DIR problems list` does (the later one wins)."""
    signature = inspect.signature(command)
    extra = inspect.Parameter(
        "suite_folder",
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(None, "--suite", help=SUITE_HELP),
        annotation=Path | None,
    )

    @functools.wraps(command)
    def wrapper(*args: Any, suite_folder: Path | None = None, **kwargs: Any) -> Any:
        global suite_root
        if suite_folder is not None:
            suite_root = suite_folder
        return command(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*signature.parameters.values(), extra])
    return wrapper


DEVICES = ("auto", "cpu", "cuda")
DEVICE_HELP = "Where kernels are judged: auto (cuda when a GPU is visible, else cpu), cpu or cuda."


def _check_device(value: str) -> str:
    if value not in DEVICES:
        raise typer.BadParameter(f"'{value}' is not one of {', '.join(DEVICES)}")
    return value


def device_option() -> Any:
    """The --device option of every command that judges kernels: one default, one meaning."""
    return typer.Option("auto", "--device", help=DEVICE_HELP, callback=_check_device)


def resolve_device(device: str) -> str:
    """auto -> cuda when torch sees a GPU, else cpu."""
    from ..experiments import resolve_device as resolve

    return resolve(device)


def console(stderr: bool = False) -> Console:
    """A console of the terminal's width; when output goes to a file or pipe, of COLUMNS if set,
    else 200 (tables are not squeezed to 80 columns in a log)."""
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not stream.isatty():
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) > 0 else 200
    return Console(stderr=stderr, width=width)


def name_width(names: Any, cap: int = 40) -> int:
    """The min_width of a table column of names: the longest name, up to `cap` (longer ones fold
    across lines rather than being cut)."""
    return min(cap, max((len(str(n)) for n in names), default=1))


def esc(value: Any) -> str:
    """Data (names, messages, shapes such as [num_tokens, hidden]) as Rich markup that shows it
    as it is."""
    return escape(str(value))


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


class RowLog:
    """The rows of a long command, one JSON line per problem as it finishes (`--out`): a rerun
    with the same file skips the problems already in it, so a killed run resumes. A last line
    cut short by a kill is dropped when the file is read."""

    def __init__(self, path: Path | None, key: str = "number"):
        self.path, self.key = path, key
        self.rows: dict[Any, dict] = {}
        if path is None or not path.exists():
            return
        text = path.read_text()
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            try:
                json.loads(lines[-1])
            except json.JSONDecodeError:
                lines.pop()  # cut short by a kill: that problem runs again
                path.write_text("".join(line + "\n" for line in lines))
        from .. import InvalidArgumentError

        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise InvalidArgumentError(f"--out {path}:{number}: not a JSON line ({error.msg})") from None
            if not isinstance(row, dict) or key not in row:
                raise InvalidArgumentError(f"--out {path}:{number}: a row without {key!r}")
            self.rows[row[key]] = row

    def done(self, key: Any) -> bool:
        return key in self.rows

    def add(self, row: dict) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                f.write(json.dumps(strict(row), allow_nan=False, default=str) + "\n")
        self.rows[row[self.key]] = row
