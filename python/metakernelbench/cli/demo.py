"""`mkb demo`: the whole protocol, offline, on this machine.

All four standard arms, one replicate, on three problems (02, 25, 28) at their small workload,
judged on the CPU, with the built-in scripted model "scripted/demo" -- a small script that
writes kernels, submits them and keeps a skill; it is not an LLM. The results go to a store;
running the demo again reuses its finished trials. It ends with the results table and the
statistics report."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state

DEMO_MODEL = "scripted/demo"
DEMO_PROBLEMS = ("02", "25", "28")
DEMO_EXPERIMENT = "demo"


def demo_experiment(concurrency: int = 2):
    from ..experiments import Experiment

    return Experiment.standard(
        DEMO_EXPERIMENT,
        DEMO_MODEL,
        problems=list(DEMO_PROBLEMS),
        replicates=1,
        concurrency=concurrency,
        workload="small",
        device="cpu",
    )


def demo_executor(suite, store: Path):
    """The demo's executor: the agent (libmkb/agent) running the scripted model, workspaces
    beside the store."""
    from ..experiments import agent_executor
    from .run import workspaces_for

    return agent_executor(DEMO_MODEL, suite=suite, device="cpu", workspace_root=workspaces_for(store),
                          store_path=store)


def _stats_summary(console, store, experiment: str) -> None:
    from rich.table import Table

    report = store.stats(experiment)
    aggregates = report.aggregates
    rows = aggregates[(aggregates["model"] == "*") & (aggregates["split"] == "all")]
    if rows.empty:
        rows = aggregates[aggregates["split"] == "all"]
    table = Table(title="R@t and S (resolved cells)", title_justify="left")
    thresholds = [c for c in aggregates.columns if c.startswith("R@")]
    for column in ["arm", "n", *thresholds, "S"]:
        table.add_column(column, justify="left" if column == "arm" else "right")
    for row in rows.itertuples():
        values = [row.arm, str(row.n)]
        values += [f"{aggregates.loc[row.Index, t]:.2f}" for t in thresholds]
        values.append(f"{row.S:.1f}")
        table.add_row(*values)
    console.print(table)
    lift = report.lift
    lift = lift[(lift["arm"] == "skill") & (lift["level"].isin(["overall", "direction"]))]
    table = Table(
        title="paired lift of the skill over its solo (ΔGM, help T, harm H; 95% bootstrap CIs)",
        title_justify="left",
    )
    for column in ("level", "direction", "problems", "ΔGM", "T", "H", "Wilcoxon p"):
        table.add_column(column, justify="left" if column in ("level", "direction") else "right")
    for row in lift.itertuples():
        table.add_row(
            row.level,
            row.direction,
            str(row.n_problems),
            f"{row.delta_gm:+.1%} [{row.delta_gm_bca_low:+.1%}, {row.delta_gm_bca_high:+.1%}]",
            f"{row.help_rate:.0%}",
            f"{row.harm_rate:.0%}",
            f"{row.wilcoxon_p_value:.2f}",
        )
    console.print(table)
    console.print(
        "[dim]three problems and one replicate: the intervals are wide by design; this shows "
        "the pipeline, not a finding.[/]"
    )


def demo(
    store: Path = typer.Option(Path("mkb-demo.db"), "--store", "-s", help="The results store to fill."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help="Attempts at once."),
    rerun_stale: bool = typer.Option(
        False, "--rerun-stale", help="Rerun trials whose task or skill changed."
    ),
) -> None:
    """Run the whole protocol offline: 4 arms x 3 problems (02, 25, 28), small workloads, the CPU
    judge and the scripted model "scripted/demo" (a script, not an LLM); then print the results
    and the statistics. Run it again: finished trials are reused."""
    from .run import print_summary, results_table, run_with_progress

    console = _state.console()
    suite = _state.load_suite()
    experiment = demo_experiment(concurrency)
    executor = demo_executor(suite, store)
    console.print(
        f"[bold]mkb demo[/]: the transfer protocol on problems {', '.join(DEMO_PROBLEMS)} "
        f"(small workloads, CPU judge) with the model '{DEMO_MODEL}' -- a built-in script, "
        f"[bold]not an LLM[/] · store {store}",
        highlight=False,
        soft_wrap=True,
    )
    result = run_with_progress(
        experiment, store, executor, rerun_stale=rerun_stale, console=console, title="demo: running attempts"
    )
    p = result.progress
    console.print(
        f"{p['reused']} trials reused from the store, {p['finished'] + p['skipped']} run now "
        f"({p['skipped']} skipped: empty skill), {p['failed']} failed",
        highlight=False,
    )
    console.print(results_table(result.trials, f"final regrade per trial ({store})"))
    print_summary(console, result)
    _stats_summary(console, result.store, DEMO_EXPERIMENT)
    console.print(f"next: mkb export {store} --format csv --out demo-export", highlight=False)
    raise typer.Exit(0 if result.complete else 1)
