"""`mkb demo`: the whole protocol, offline, on this machine.

All four standard arms, one replicate, on three problems (02, 25, 28) at their small workload,
judged on the CPU, with the built-in scripted model "scripted/demo" -- a small script that
writes kernels, submits them and keeps a skill; it is not an LLM. The results go to a store;
running the demo again reuses its finished trials.

What the script is built to show is effort, not speed: a solo submits a slightly wrong kernel
first and writes what it learned into SKILL.md; given that skill, the attempt in the other DSL
skips the wrong kernel. So the demo prints, per arm, the counted submissions and the first-try
passes, skill against solo. Its kernels are eager PyTorch like the references, so every speedup
is about 1 and what differs between arms is the CPU judge's timing noise: the statistics are
printed as such (the pipeline, not a finding), with the report's note on measurement noise."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state

DEMO_MODEL = "scripted/demo"
DEMO_PROBLEMS = ("02", "25", "28")
DEMO_EXPERIMENT = "demo"
#: The GPU demo (--device cuda): the DSL-writing script on the problems with shipped solutions.
GPU_DEMO_EXPERIMENT = "demo-dsl"


def gpu_demo_problems(suite) -> list[str]:
    """The problems with a shipped solution in both DSLs (solutions/cutedsl.py and tirx.py):
    the ones scripted/demo-dsl has kernels for."""
    return [
        p.slug
        for p in suite
        if all((Path(p.directory) / "solutions" / f"{dsl}.py").is_file() for dsl in ("cutedsl", "tirx"))
    ]


def _only(problems: list[str], only: list[str] | None, suite) -> list[str]:
    """`problems` narrowed to those `only` (numbers or slug globs) names; naming none is an error."""
    if not only:
        return problems
    wanted = {p.slug for p in suite.select(globs=only)}
    chosen = [name for name in problems if suite.find(name).slug in wanted]
    if not chosen:
        from .. import InvalidArgumentError

        raise InvalidArgumentError(
            f"--problems {' '.join(only)}: none of the demo's problems ({', '.join(problems)})"
        )
    return chosen


def demo_experiment(concurrency: int = 2, device: str = "cpu", suite=None, only: list[str] | None = None):
    """The CPU demo (scripted/demo on 02, 25, 28, small workloads) or, on CUDA, the GPU demo
    (scripted/demo-dsl on every problem with shipped solutions, full workloads); `only` narrows
    the problems (numbers or slug globs)."""
    from ..agent import SCRIPTED_DSL_MODEL
    from ..experiments import Experiment

    if only or device == "cuda":
        suite = suite or _state.load_suite()
    if device == "cuda":
        return Experiment.standard(
            GPU_DEMO_EXPERIMENT,
            SCRIPTED_DSL_MODEL,
            problems=_only(gpu_demo_problems(suite), only, suite),
            replicates=1,
            concurrency=concurrency,
            workload="full",
            device="cuda",
        )
    return Experiment.standard(
        DEMO_EXPERIMENT,
        DEMO_MODEL,
        problems=_only(list(DEMO_PROBLEMS), only, suite),
        replicates=1,
        concurrency=concurrency,
        workload="small",
        device="cpu",
    )


def demo_executor(suite, store: Path, device: str = "cpu", gpus: str | None = None):
    """The demo's executor: the agent (libmkb/agent) running the scripted model, workspaces
    beside the store."""
    from ..agent import SCRIPTED_DSL_MODEL
    from ..experiments import agent_executor
    from .run import workspaces_for

    model = SCRIPTED_DSL_MODEL if device == "cuda" else DEMO_MODEL
    return agent_executor(
        model, suite=suite, device=device, workspace_root=workspaces_for(store), store_path=store, gpus=gpus
    )


#: Said beside every speedup the demo prints.
CPU_NOISE = (
    "Speedups on the CPU judge are timing noise: the demo's kernels are eager PyTorch like the "
    "references (speedup 1 by construction), so differences between arms here are noise of the "
    "CPU judge's timing, not an effect."
)


def effort_summary(console, store, experiment: str) -> None:
    """Counted submissions and first-try passes per arm, skill against solo: the effect the
    demo's script is built to produce."""
    from rich.table import Table

    from ..reporting.data import submission_effort

    effort = submission_effort(store, experiment)
    table = Table(
        title="what the script is built to show: counted submissions and first-try passes per arm",
        title_justify="left",
    )
    width = _state.name_width(effort["arm"])
    # counted: counted submissions (total, and per attempt); first try: attempts that passed on
    # their first counted submission.
    for column in ("arm", "attempts", "counted", "per attempt", "first try"):
        table.add_column(
            column,
            justify="left" if column == "arm" else "right",
            overflow="fold",
            min_width=width if column == "arm" else None,
        )
    for row in effort.itertuples():
        table.add_row(
            row.arm,
            str(row.attempts),
            str(row.counted_submissions),
            f"{row.counted_per_attempt:.1f}",
            f"{row.first_try_passes} of {row.attempts}",
        )
    console.print(table)
    solo, skill = effort[~effort["conditioned"]], effort[effort["conditioned"]]
    if len(solo) and len(skill):

        def per(frame):
            return frame["counted_submissions"].sum() / frame["attempts"].sum()

        console.print(
            f"skill against solo: {per(skill):.1f} counted submissions per attempt against {per(solo):.1f}; "
            f"passed on the first counted submission {skill['first_try_passes'].sum()} of "
            f"{skill['attempts'].sum()} against {solo['first_try_passes'].sum()} of {solo['attempts'].sum()}",
            highlight=False,
            markup=False,
        )


def _stats_summary(console, store, experiment: str, on_cpu: bool = True) -> None:
    from rich.table import Table

    report = store.stats(experiment)
    aggregates = report.aggregates
    rows = aggregates[(aggregates["model"] == "*") & (aggregates["split"] == "all")]
    if rows.empty:
        rows = aggregates[aggregates["split"] == "all"]
    table = Table(
        title="R@t and S (resolved cells"
        + (
            "; CPU timing noise, not an effect)"
            if on_cpu
            else "; one replicate: the pipeline, not a finding)"
        ),
        title_justify="left",
    )
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
        title="paired lift of the skill over its solo (ΔGM, help T, harm H; 95% bootstrap CIs)"
        + (" on CPU timing noise" if on_cpu else ""),
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
    if on_cpu:
        console.print(f"[dim]{CPU_NOISE}[/]", highlight=False)
    console.print(f"[dim]{_state.esc(report.measurement_noise['note'])}[/]", highlight=False)
    console.print(
        "[dim]a few problems and one replicate, with a script: the intervals are wide by design; "
        "this shows the pipeline, not a finding.[/]"
    )


def demo(
    store: Path = typer.Option(Path("mkb-demo.db"), "--store", "-s", help="The results store to fill."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help="Attempts at once."),
    rerun_stale: bool = typer.Option(
        False, "--rerun-stale", help="Rerun trials whose task or skill changed."
    ),
    device: str = _state.device_option(),
    gpus: str | None = typer.Option(None, "--gpus", metavar="LIST", help="The GPUs to judge on (cuda)."),
    problems: list[str] | None = typer.Option(
        None, "--problems", "--problem", "-p", help="Only these of the demo's problems (numbers, globs)."
    ),
) -> None:
    """Run the whole protocol. On the CPU (--device cpu, or auto without a GPU), offline: 4 arms x 3
    problems (02, 25, 28), small workloads, the CPU judge and the scripted model "scripted/demo"
    (a script, not an LLM), whose speedups are the CPU judge's timing noise. On a GPU (--device
    cuda, or auto with one): the GPU demo, "scripted/demo-dsl" writing CuTe DSL and TIRx kernels
    for every problem with shipped solutions, full workloads, the real DSLs and the GPU judge.
    Then print what the script is built to show (counted submissions and first-try passes per
    arm, skill against solo), the results and the statistics. Run it again: finished trials are
    reused. --problems narrows either demo to some of its problems."""
    from .run import preflight, print_summary, results_table, run_with_progress

    device = _state.resolve_device(device)
    if device == "cpu":
        if gpus is not None:
            from .. import InvalidArgumentError

            raise InvalidArgumentError("--gpus: the CPU demo judges on the CPU (add --device cuda)")
    console = _state.console()
    suite = _state.load_suite()
    experiment = demo_experiment(concurrency, device, suite, only=problems)
    if device == "cuda":
        # Before anything is created (the store, the workspaces): a GPU, the judge's GPUs.
        preflight(experiment.model, device, device, gpus, None)
        if not experiment.problems:
            from .. import FailedPreconditionError

            raise FailedPreconditionError("the suite has no problem with shipped solutions in both DSLs")
    executor = demo_executor(suite, store, device, gpus)
    if device == "cuda":
        console.print(
            f"[bold]mkb demo --device cuda[/]: the transfer protocol on problems "
            f"{', '.join(experiment.problems)} (full workloads, the GPU judge, CuTe DSL and TIRx "
            f"kernels) with the model '{experiment.model}' -- a built-in script, [bold]not an LLM[/]: "
            "it writes each problem's shipped solution, after a copy of it with one deliberate bug "
            f"unless a skill names the bug · store {store}",
            highlight=False,
            soft_wrap=True,
        )
    else:
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
    console.print(results_table(result.trials, f"final regrade per trial ({store}): speedup vs eager"))
    on_cpu = device == "cpu"
    if on_cpu:
        console.print(f"[dim]{CPU_NOISE}[/]", highlight=False)
    print_summary(console, result)
    effort_summary(console, result.store, experiment.name)
    _stats_summary(console, result.store, experiment.name, on_cpu)
    console.print(f"next: mkb export {store} --format csv --out demo-export", highlight=False)
    raise typer.Exit(0 if result.complete else 1)
