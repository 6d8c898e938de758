"""`mkb import`: bring results from elsewhere into a store."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from . import _state
from .run import DEFAULT_STORE

app = typer.Typer(
    help="Import results from elsewhere into a store.",
    no_args_is_help=True,
)


@app.command("upstream-results")
@_state.with_suite_option
def upstream_results(
    directory: Path = typer.Argument(
        ..., help="The published harness's results/ folder, or one model's results/<model>/."
    ),
    store: Path = typer.Option(Path(DEFAULT_STORE), "--store", "-s", help="The results store (SQLite)."),
    experiment: str | None = typer.Option(
        None, "--experiment", "-e", help="Experiment name (one model tree only; default: upstream-<folder>)."
    ),
    skip_missing_problems: bool = typer.Option(
        False,
        "--skip-missing-problems",
        help="Leave out problems the suite does not have, instead of stopping.",
    ),
) -> None:
    """Import the published Python harness's results/ into a store.

    Imports the per-trial records of the published Python harness (Harbor agents on Modal):
    each model's results tree becomes one experiment of the four standard arms, stored as if
    run here (rewards, errors, skips, usage, skills, fingerprints). Problems are matched to the
    suite by number. Importing again changes nothing; a changed tree replaces the experiment's
    trials (the earlier tries stay archived). All or nothing: every tree is checked before the
    store is touched. docs/statistics.md gives the mapping."""
    from .. import InvalidArgumentError, upstream

    console = _state.console()
    suite = _state.load_suite()
    trees = upstream.model_trees(directory)
    if experiment is not None and len(trees) > 1:
        raise InvalidArgumentError(
            f"--experiment: one name for {len(trees)} model trees in {directory}; import them one by one"
        )
    results = upstream.import_results(
        directory, store, suite=suite, experiment=experiment, skip_missing_problems=skip_missing_problems
    )
    table = Table(title=f"imported into {store}", title_justify="left")
    for column in (
        "experiment",
        "model",
        "problems",
        "replicates",
        "records",
        "skipped",
        "errors",
        "no record",
        "stored: finished",
        "skipped",
        "failed",
        "blocked",
        "reused",
        "retired",
    ):
        table.add_column(
            column, justify="left" if column in ("experiment", "model") else "right", overflow="fold"
        )
    warnings: list[str] = []
    for result in results:
        tree = result.root
        c, s = result.counts, result.stored
        table.add_row(
            result.experiment,
            result.model,
            str(result.problems),
            str(result.replicates),
            str(c["finished"]),
            str(c["skipped"]),
            str(c["error"]),
            str(c["no_record"]),
            str(s.get("finished", 0)),
            str(s.get("skipped", 0)),
            str(s.get("failed", 0)),
            str(s.get("blocked", 0)),
            str(s.get("reused", 0)),
            str(len(result.retired)),
        )
        if result.skipped_problems:
            warnings.append(
                f"{tree}: left out {len(result.skipped_problems)} problems not in the suite: "
                + ", ".join(result.skipped_problems)
            )
        warnings += result.warnings
    console.print(table)
    console.print(
        "[dim]failed: the harness recorded an error, or the trial has no record; blocked: its source "
        "failed (it never ran). Both are unresolved, as in the harness's own statistics; retired: "
        "trials of an earlier import that this tree no longer holds (archived, out of the "
        "statistics).[/]",
        soft_wrap=True,
    )
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {_state.esc(warning)}", highlight=False, soft_wrap=True)
    console.print(f"next: mkb stats {store}   ·   mkb report {store} --out report", highlight=False)


@app.command("upstream-problems")
def upstream_problems(
    checkout: Path = typer.Argument(..., help="A checkout of the published harness (holds problems/)."),
    out: Path = typer.Option(..., "--out", "-o", help="The suite folder to write (kept out of git)."),
    sol_execbench: Path | None = typer.Option(
        None, "--sol-execbench", help="Your copy of the SOL-ExecBench dataset: L1/L2/Quant.parquet."
    ),
    device: str = _state.device_option(),
    problems: list[int] | None = typer.Option(None, "--problems", "--problem", "-p", help="Only these numbers."),
) -> None:
    """Import the published harness's problem files, as they are, into a suite folder.

    Every problems/<family>/NN_<slug>.py of the checkout becomes a problem folder: a
    problem.textproto (number, slug, family, provenance from the file's header comments, input
    and output specs and in-place updates from draws of its make_inputs(), a roofline estimate,
    peak memory with the float64 anchors) and a reference.py that is the published file byte
    for byte plus an adapter (so the fingerprint follows the file). The published files draw on
    CUDA: import them on a GPU (--device auto or cuda). With --sol-execbench, the SOL-ExecBench
    recipes are assembled from the dataset as the published harness does, each checked against
    its SHA-256 (a mismatch is refused). Use the folder with `mkb --suite OUT ...` or MKB_SUITE.
    Exit status 1 when any file could not be imported."""
    from .. import load_suite
    from .. import upstream_problems as up

    device = _state.resolve_device(device)
    console = _state.console()
    report = up.import_checkout(
        checkout, out, sol_execbench=sol_execbench, device=device, numbers=problems,
        progress=lambda what: console.print(f"[dim]importing {what}[/]", highlight=False),
    )
    table = Table(title=f"imported into {report.out}", title_justify="left")
    for column in ("#", "slug", "drawn on"):
        table.add_column(column)
    for number, slug, drawn_on in report.imported:
        table.add_row(f"{number:02d}", slug, drawn_on)
    console.print(table)
    for where, why in report.failed:
        console.print(f"[red]not imported:[/] {where}: {why}", highlight=False, soft_wrap=True)
    if report.skipped_recipes:
        console.print(f"[yellow]note:[/] {report.skipped_recipes} SOL-ExecBench recipes were not assembled: "
                      "pass --sol-execbench DATASET_DIR (your copy of nvidia/SOL-ExecBench)", highlight=False)
    if report.imported:
        load_suite(report.out)  # the folder loads and validates as a suite
        console.print(f"next: mkb --suite {report.out} problems list", highlight=False)
    raise typer.Exit(0 if report.ok else 1)
