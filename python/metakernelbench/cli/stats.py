"""`mkb stats`: the statistics of a store (docs/statistics.md) as tables, or as the JSON report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from . import _state

BY_HELP = (
    "Grouping levels of the lift and standing tables, besides overall: model, direction, family or a "
    "comma-separated combination (repeat for several). Default: model, direction, model,direction, family."
)


def stats_config(resamples: int | None, seed: int | None, tau: float | None) -> dict[str, Any]:
    """StatsConfig fields from the options given (the others keep the paper's values)."""
    from .. import InvalidArgumentError

    config: dict[str, Any] = {}
    if resamples is not None:
        if resamples < 1:
            raise InvalidArgumentError(f"--resamples: must be >= 1, got {resamples}")
        config["bootstrap_resamples"] = resamples
    if seed is not None:
        config["seed"] = seed
    if tau is not None:
        if not tau > 0:
            raise InvalidArgumentError(f"--tau: must be > 0, got {tau} (omit it to derive τ)")
        config["tau"] = tau
    return config


def split_values(values: list[str] | None) -> list[str]:
    """Repeated options; each value may itself be a level such as model,direction."""
    return [v.strip() for v in values or [] if v.strip()]


def rich_table(table: Any) -> Table:
    """A reporting.tables.DisplayTable as a rich Table."""
    out = Table(title=table.title, title_justify="left", show_header=any(table.columns))
    for column, align in zip(table.columns, table.align, strict=True):
        out.add_column(column, justify="right" if align == "r" else "left", overflow="fold")
    for row in table.rows:
        out.add_row(*row)
    return out


def print_tables(console: Any, tables: list[Any]) -> None:
    for table in tables:
        console.print(rich_table(table))
        for note in table.notes:
            console.print(f"[dim]{note}[/]", highlight=False, soft_wrap=True)
        console.print()


def stats(
    store: Path = typer.Argument(..., help="The results store (SQLite file)."),
    json_out: bool = typer.Option(
        False, "--json", help="Print the JSON report (keys: docs/statistics.md). " + _state.JSON_NULLS
    ),
    by: list[str] | None = typer.Option(None, "--by", "-b", help=BY_HELP),
    experiment: list[str] | None = typer.Option(
        None, "--experiment", "-e", help="Only these experiments (repeat; default: all, pooled)."
    ),
    resamples: int | None = typer.Option(None, "--resamples", help="Bootstrap resamples (default 10000)."),
    seed: int | None = typer.Option(None, "--seed", help="Bootstrap seed (default 20260101)."),
    tau: float | None = typer.Option(
        None, "--tau", help="τ, the help / harm threshold on d (default: derived)."
    ),
    confidence: float = typer.Option(0.95, "--confidence", help="Confidence of every interval."),
) -> None:
    """Print the statistics of a store (or --json).

    The statistics of STORE (docs/statistics.md): the published harness's R@t and S (with each
    group's cell-replicates and coverage, and per cell), the R@t and S lifts and the paired lift
    ΔGM with help and harm rates, with bootstrap intervals (measurement noise included where
    timing samples are stored) and tests, the relative-standing table and the usage per arm, over
    every experiment in the store (each model's cells kept apart by model). docs/statistics.md
    gives the formulas and the JSON keys."""
    from ..reporting import normalize_levels, store_stats, tables

    if not 0 < confidence < 1:
        from .. import InvalidArgumentError

        raise InvalidArgumentError(f"--confidence: must be in (0, 1), got {confidence}")
    result = store_stats(
        store,
        split_values(experiment) or None,
        levels=normalize_levels(split_values(by)),
        config=stats_config(resamples, seed, tau),
        confidence=confidence,
    )
    if json_out:
        typer.echo(result.report.to_json(2))
        return
    console = _state.console()
    shown = [tables.overview(result), tables.aggregates(result, "pooled")]
    if len(result.models) > 1:
        per_model = tables.aggregates(result, "all_split")
        per_model.title = "R@t and S per model (split all)"
        shown.append(per_model)
    shown += [
        tables.cells(result),
        tables.rt_lift(result, tuple(level for level in result.report.levels if "family" not in level)),
        tables.lift(result),
        tables.standing(result),
        tables.usage(result),
    ]
    print_tables(console, shown)
    if result.report.counts["n_resolved"] == 0:
        console.print("[yellow]no resolved comparison yet: every statistic is empty[/]")
