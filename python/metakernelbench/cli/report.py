"""`mkb report`: report.html and report.md, with figures, from a store."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state
from .stats import BY_HELP, split_values, stats_config


def report(
    store: Path = typer.Argument(..., help="The results store (SQLite file)."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for report.html, report.md, the figures, stats.json."
    ),
    by: list[str] | None = typer.Option(None, "--by", "-b", help=BY_HELP + " Added to the default levels."),
    experiment: list[str] | None = typer.Option(
        None, "--experiment", "-e", help="Only these experiments (repeat; default: all, pooled)."
    ),
    title: str | None = typer.Option(None, "--title", help="The report's title."),
    resamples: int | None = typer.Option(None, "--resamples", help="Bootstrap resamples (default 10000)."),
    seed: int | None = typer.Option(None, "--seed", help="Bootstrap seed (default 20260101)."),
    tau: float | None = typer.Option(
        None, "--tau", help="τ, the help / harm threshold on d (default: derived)."
    ),
) -> None:
    """Write report.html and report.md, with figures, for a store.

    Writes a report of STORE to a folder: report.html (self-contained: open it in a browser),
    report.md with the figures as PNG files beside it, and stats.json. Figures: paired lift by
    problem, transfer by relative standing, lift per family, model x direction, usage and cost
    per arm; a figure without enough data says so. docs/report.md describes it."""
    from ..reporting import build_report

    files = build_report(
        store,
        out,
        experiments=split_values(experiment) or None,
        by=split_values(by),
        config=stats_config(resamples, seed, tau),
        title=title,
    )
    console = _state.console()
    for path in (files.html, files.markdown, *files.figures, files.json):
        console.print(f"wrote {path}", highlight=False, soft_wrap=True)
    for plot in files.plots:
        if plot.note:
            console.print(f"[yellow]{plot.title}: {plot.note}[/]", highlight=False, soft_wrap=True)
