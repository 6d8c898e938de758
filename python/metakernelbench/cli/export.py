"""`mkb export`: a store's tables as JSON Lines, CSV or Parquet files."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state


def export(
    store: Path = typer.Argument(..., help="The results store (SQLite file)."),
    format: str = typer.Option("jsonl", "--format", "-F", help="jsonl, csv or parquet."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the files: <out>/<table>.<format>."),
    experiment: str | None = typer.Option(None, "--experiment", "-e", help="Only this experiment."),
    tables: list[str] | None = typer.Option(
        None, "--tables", "-t", help="Only these tables (repeat or comma-separate)."
    ),
) -> None:
    """Export STORE: one file per table (experiments, trials, attempts, archived_tries,
    submissions, verdicts, skills, trajectories, usage, and cells: the statistics' input).
    docs/protocol.md describes the columns."""
    from ..store import FORMATS, Store

    if format not in FORMATS:
        from .. import InvalidArgumentError

        raise InvalidArgumentError(f"--format: '{format}' is not one of {', '.join(FORMATS)}")
    chosen = [t.strip() for value in tables or [] for t in value.split(",") if t.strip()]
    written = Store(store, read_only=True).export(out, format, tables=chosen or None, experiment=experiment)
    console = _state.console()
    for path in written:
        console.print(f"wrote {path}", highlight=False, soft_wrap=True)
