"""`mkb store`: operations on results stores (merge)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state

app = typer.Typer(help="Operations on results stores: merge the stores of several runs into one.")


@app.command("merge")
def merge(
    stores: list[Path] = typer.Argument(..., help="The stores to merge (SQLite files)."),
    out: Path = typer.Option(..., "--out", "-o", help="The new store to write (must not exist)."),
) -> None:
    """Merge STORES into a new store: every experiment with all its trials, tries, verdicts,
    skills and trajectories. Replicates of one design run by several processes or machines
    (each under its own --experiment name) then sit in one store, and `mkb stats` pools them.
    Refused, writing nothing: an experiment name held by two stores with different designs
    (conflicting specs), and one trial resolved differently in two stores."""
    from ..store import merge as merge_stores

    summary = merge_stores(stores, out)
    console = _state.console()
    console.print(
        f"wrote {out}: {len(summary['experiments'])} experiments "
        f"({', '.join(summary['experiments']) or 'none'}), {summary['trials']} trials"
        + (f"; {summary['duplicates']} held twice (taken once)" if summary["duplicates"] else "")
        + (
            f"; {summary['superseded']} unresolved copies left for resolved ones"
            if summary["superseded"]
            else ""
        ),
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
