"""`mkb run`: run the transfer protocol for a model, with live progress, into a store."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from . import _state

DEFAULT_STORE = "mkb-results.db"


def _bad(option: str, message: str) -> Exception:
    """An option's value is wrong: metakernelbench's InvalidArgumentError (one line, exit 2)."""
    from .. import InvalidArgumentError

    return InvalidArgumentError(f"{option}: {message}")


def _split(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated lists alike: --arms a,b --arms c."""
    out: list[str] = []
    for value in values or []:
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def _human(n: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.0f}"


def _arms(names: list[str]) -> list[Any]:
    """The chosen standard / control arms, with the arms they depend on added."""
    from ..experiments import standard_arms

    known = {arm.name: arm for arm in standard_arms(control=True)}
    if not names:
        return standard_arms()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise _bad("--arms", f"unknown arm '{unknown[0]}'; arms are {', '.join(known)}")
    wanted = list(dict.fromkeys(names))
    for name in list(wanted):
        arm = known[name]
        for needed in (arm.base, (arm.skill or {}).get("arm")):
            if needed and needed not in wanted:
                wanted.append(needed)
    return [known[n] for n in known if n in wanted]


def workspaces_for(store: Path) -> Path:
    """Where the agent's workspaces go for a store: beside it (results.db: results-workspaces/)."""
    return store.with_name(store.stem + "-workspaces")


def load_executor(reference: str) -> Any:
    """MODULE:ATTR: a Python executor (callable spec -> attempt) or a C++ TrialExecutor."""
    module_name, _, attr = reference.partition(":")
    if not module_name or not attr:
        raise _bad("--executor", f"'{reference}' is not MODULE:ATTR")
    try:
        value = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise _bad("--executor", f"'{reference}': {error}") from None
    return value


# ------------------------------------------------------------------------------------------------
# Progress


class ProgressView:
    """Live progress of a run: the running attempts and the totals. Fed by the protocol's
    events (from its threads); rendered by rich.Live on a terminal, as lines otherwise."""

    def __init__(self, console, title: str):
        self.console = console
        self.title = title
        self.lock = threading.Lock()
        self.running: dict[str, dict[str, Any]] = {}
        self.totals: dict[str, Any] = {}
        self.live = console.is_terminal

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        trial = event["trial_id"]
        with self.lock:
            self.totals = event["progress"]
            if kind == "started":
                self.running[trial] = {
                    "event": event,
                    "start": time.monotonic(),
                    "submissions": 0,
                    "tokens": 0,
                    "last": "",
                }
            elif kind == "submission" and trial in self.running:
                row = self.running[trial]
                row["submissions"] += 1 if event.get("counted") else 0
                row["last"] = event.get("verdict", "")
            elif kind == "usage" and trial in self.running:
                self.running[trial]["tokens"] = event.get("input_tokens", 0) + event.get("output_tokens", 0)
            elif kind in ("finished", "skipped", "failed", "retry"):
                self.running.pop(trial, None)
        line = self._line(event)
        if line is not None:
            self.console.print(line, highlight=False, soft_wrap=True)

    def _line(self, event: dict[str, Any]) -> Text | None:
        kind = event["kind"]
        where = f"{event['problem_slug']} {event['arm']} r{event['replicate']}"
        if kind == "finished":
            if event.get("passed"):
                speed = event.get("speedup")
                verdict = Text(f"passed {speed:.2f}x" if speed is not None else "passed", style="green")
            else:
                verdict = Text("did not pass", style="yellow")
            return Text.assemble(("  done    ", "bold"), where, "  ", verdict)
        if kind == "skipped":
            return Text.assemble(("  skipped ", "bold"), where, "  (empty skill: counts as its solo)")
        if kind == "failed":
            return Text.assemble(("  FAILED  ", "bold red"), where, f"  {event.get('message', '')}")
        if kind == "retry":
            return Text.assemble(
                ("  retry   ", "bold yellow"),
                where,
                f"  try {event['try_number']} archived: {event.get('message', '')}",
            )
        if kind == "blocked":
            return Text.assemble(("  blocked ", "bold red"), where, f"  {event.get('message', '')}")
        if kind == "started" and not self.live:
            return Text.assemble(("  start   ", "bold"), where, f"  try {event['try_number']}")
        return None

    def totals_text(self) -> Text:
        p = self.totals or {}
        if not p:
            return Text("planning ...")
        cost = p.get("cost_usd", 0.0)
        return Text.assemble(
            (f"{p['done']}/{p['planned']} trials done", "bold"),
            f"  ·  running {p['running']}  ·  passed {p['passed']}  ·  reused {p['reused']}",
            f"  ·  failed {p['failed']}  ·  blocked {p['blocked']}  ·  skipped {p['skipped']}",
            f"  ·  retries {p['retries']}\n",
            f"submissions {p['submissions']}",
            f"  ·  tokens {_human(p['input_tokens'])} in / {_human(p['output_tokens'])} out",
            f"  ·  ${cost:.2f}",
        )

    def __rich__(self) -> Group:
        with self.lock:
            table = Table(title=self.title, title_justify="left", expand=False, box=None, padding=(0, 1))
            for column in ("attempt", "try", "submissions", "last verdict", "tokens", "elapsed"):
                table.add_column(
                    column,
                    justify="left" if column in ("attempt", "last verdict") else "right",
                    overflow="fold",
                )
            now = time.monotonic()
            for _, row in sorted(self.running.items(), key=lambda item: item[0]):
                e = row["event"]
                table.add_row(
                    Text(f"{e['problem_slug']} {e['arm']} r{e['replicate']}"),
                    str(e["try_number"]),
                    str(row["submissions"]),
                    Text(row["last"]),
                    _human(row["tokens"]),
                    f"{now - row['start']:.0f}s",
                )
            return Group(table, self.totals_text())


class _Interrupts:
    """Ctrl-C: the first asks the run to stop starting trials (running ones are waited for, then
    the run raises); the second leaves at once: the store stays consistent, and the running
    tries are archived as interrupted by the next run."""

    def __init__(self, console):
        self.console = console
        self.count = 0
        self.previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def _handle(self, signum, frame):
        self.count += 1
        if self.count >= 2:
            self.console.print("\n[bold red]interrupted again: leaving now[/] (run again to resume)")
            os._exit(130)
        self.console.print(
            "\n[yellow]stopping: no new attempts; waiting for the running ones (Ctrl-C again to leave now)[/]"
        )

    def cancelled(self) -> bool:
        return self.count > 0


def run_with_progress(
    experiment: Any, store: Any, executor: Any, *, rerun_stale: bool = False, console=None, title: str = ""
) -> Any:
    """Runs the experiment with the live progress display; returns the RunResult."""
    from ..experiments import run as run_experiment

    console = console or _state.console()
    view = ProgressView(console, title or f"running {experiment.name}")
    with _Interrupts(console) as interrupts:
        if view.live:
            with Live(view, console=console, refresh_per_second=4, transient=False):
                result = run_experiment(
                    experiment,
                    store,
                    executor=executor,
                    rerun_stale=rerun_stale,
                    suite=_state.load_suite(),
                    progress=view,
                    cancel=interrupts.cancelled,
                )
        else:
            result = run_experiment(
                experiment,
                store,
                executor=executor,
                rerun_stale=rerun_stale,
                suite=_state.load_suite(),
                progress=view,
                cancel=interrupts.cancelled,
            )
            console.print(view.totals_text(), highlight=False, soft_wrap=True)
    return result


# ------------------------------------------------------------------------------------------------
# Tables


def plan_table(frame, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    widths = {"arm": _state.name_width(frame["arm"]), "action": _state.name_width(frame["action"])}
    reasons = bool(frame["reason"].astype(bool).any()) if len(frame) else False
    columns = [
        ("#", "right"),
        ("problem", "left"),
        ("arm", "left"),
        ("r", "right"),
        ("depends on", "left"),
        ("action", "left"),
    ] + ([("why", "left")] if reasons else [])
    for column, justify in columns:
        table.add_column(column, justify=justify, overflow="fold", min_width=widths.get(column))  # type: ignore[arg-type]
    styles = {
        "run": "",
        "reuse": "dim",
        "stale": "bold red",
        "blocked": "red",
        "rerun_stale": "yellow",
        "rerun_failed": "yellow",
        "rerun_interrupted": "yellow",
        "check_skill": "cyan",
    }
    for row in frame.itertuples():
        depends = row.depends_on  # a trial id "<experiment>/<problem>/<arm>/r<n>", or "<model>:<arm>"
        if depends.endswith(f"/r{row.replicate}"):
            depends = depends.rsplit("/", 2)[-2]
        table.add_row(
            f"{row.problem_number:02d}",
            Text(row.problem_slug),
            Text(row.arm),
            str(row.replicate),
            Text(depends or "-"),
            Text(row.action, style=styles.get(row.action, "")),
            *([Text(row.reason)] if reasons else []),
        )
    return table


def results_table(trials, title: str) -> Table:
    """Problems x arms: the final regrade of each trial (replicates joined by spaces)."""
    table = Table(title=title, title_justify="left")
    arms = list(dict.fromkeys(trials["arm"]))
    table.add_column("#", justify="right")
    table.add_column("problem", overflow="fold")
    for arm in arms:  # a long arm name folds in its header; the cells are short
        table.add_column(Text(arm), overflow="fold")
    for (number, slug), rows in trials.groupby(["problem_number", "problem_slug"], sort=True):
        cells = []
        for arm in arms:
            parts = []
            for row in rows[rows["arm"] == arm].sort_values("replicate").itertuples():
                if row.state == "finished" and row.passed == 1:
                    parts.append(f"[green]{row.speedup:.2f}x[/]")
                elif row.state == "finished":
                    parts.append(f"[yellow]{row.final_status or 'no kernel'}[/]")
                elif row.state == "skipped":
                    parts.append("[dim]skipped[/]")
                else:
                    parts.append(f"[red]{row.state}[/]")
            cells.append(" ".join(parts) or "-")
        table.add_row(f"{int(number):02d}", Text(slug), *cells)
    return table


def print_summary(console, result) -> None:
    for line in result.failed:
        console.print(f"[red]failed:[/] {_state.esc(line)}", highlight=False, soft_wrap=True)
    for line in result.blocked:
        console.print(f"[red]blocked:[/] {_state.esc(line)}", highlight=False, soft_wrap=True)
    for line in result.stale_kept:
        console.print(f"[yellow]stale (kept):[/] {_state.esc(line)}", highlight=False, soft_wrap=True)
    for line in result.warnings:
        console.print(f"[yellow]warning:[/] {_state.esc(line)}", highlight=False, soft_wrap=True)
    if getattr(result, "retired", None):
        console.print(
            f"[yellow]retired:[/] {len(result.retired)} trials of the experiment outside this plan "
            "(their tries archived; out of the statistics; a plan that holds them again restores them)",
            highlight=False,
            soft_wrap=True,
        )


# ------------------------------------------------------------------------------------------------
# Fail fast


def gpu_visible() -> bool:
    """Whether torch sees a GPU (what the judge's host will use)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def preflight(
    model: str, device: str, resolved_device: str, gpus: str | None, ray_address: str | None
) -> None:
    """What would make a run fail at its first trial, checked before anything is created: the
    model id and its provider, the provider's API key, the device (and --gpus), Ray when asked.
    Each is one line (metakernelbench's errors: exit 2)."""
    from .. import FailedPreconditionError, InvalidArgumentError
    from .. import agent as agent_module
    from ..judge import gpu_list

    try:
        agent_module.parse_model_id(model)
        agent_module.check_model(model)
    except InvalidArgumentError as error:
        raise _bad("--model", str(error)) from None
    except FailedPreconditionError as error:
        raise FailedPreconditionError(f"--model: {error}") from None
    if ray_address is not None:
        if gpus is not None:
            raise _bad("--gpus", "not with --ray (each GPU of the cluster gets its own actor)")
        try:
            import ray  # noqa: F401
        except ImportError:
            raise FailedPreconditionError(
                "--ray: Ray is not installed (pip install 'metakernelbench[ray]')"
            ) from None
        return  # the cluster's GPUs are not this machine's
    if device == "cuda" and not gpu_visible():
        raise FailedPreconditionError(
            "--device cuda: no GPU is visible here (torch.cuda.is_available() is False); "
            "use --device cpu for the CPU judge"
        )
    if gpus is not None:
        from .._core import parse_gpu_list

        listed = parse_gpu_list(gpu_list(gpus), "--gpus")
        if resolved_device != "cuda":
            raise _bad(
                "--gpus", f"{','.join(listed)} given, but kernels are judged on the CPU (--device cpu)"
            )
    if model == agent_module.SCRIPTED_DSL_MODEL and resolved_device != "cuda":
        raise _bad("--model", f"{model} writes DSL kernels, which need the GPU judge (--device cuda)")


# ------------------------------------------------------------------------------------------------
# The command


def run(
    model: str = typer.Option(
        ...,
        "--model",
        "-m",
        help="Model id: anthropic/<m>, openai/<m>, openai-compatible/<m>@<url>, scripted/demo.",
    ),
    problems: list[str] | None = typer.Option(
        None,
        "--problems",
        "--problem",
        "-p",
        help="Problem globs, slugs or numbers (repeat or comma-separate).",
    ),
    families: list[str] | None = typer.Option(
        None, "--families", "--family", "-f", help="Only these families."
    ),
    arms: list[str] | None = typer.Option(
        None,
        "--arms",
        "-a",
        help="Arms (default: the four standard ones; also solo_tirx_control, solo_cutedsl_control).",
    ),
    replicates: int = typer.Option(3, "--replicates", "-r", min=1, help="Replicates per cell."),
    concurrency: int = typer.Option(4, "--concurrency", "-j", min=1, help="Attempts at once."),
    store: Path = typer.Option(Path(DEFAULT_STORE), "--store", "-s", help="The results store (SQLite)."),
    experiment: str | None = typer.Option(
        None, "--experiment", "-e", help="Experiment name in the store (default: the model id)."
    ),
    rerun_stale: bool = typer.Option(
        False, "--rerun-stale", help="Rerun trials whose task or skill changed."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", "-n", help="Print the plan; run nothing."),
    workload: str | None = typer.Option(
        None, "--workload", "-w", help="small or full (default: full on CUDA, small on the CPU)."
    ),
    device: str = _state.device_option(),
    executor: str | None = typer.Option(
        None,
        "--executor",
        metavar="MODULE:ATTR",
        help="A Python executor instead of the agent (callable spec -> attempt).",
    ),
    gpus: str | None = typer.Option(
        None,
        "--gpus",
        metavar="LIST",
        help="The GPUs to judge on, e.g. 0,1 (default: every visible one); one evaluation per GPU at a time.",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray",
        metavar="ADDRESS|auto",
        help="Run on a Ray cluster: attempts as Ray tasks, evaluations on one GPU actor per GPU; "
        "the store stays here; --device auto means cuda (needs metakernelbench[ray]).",
    ),
) -> None:
    """Run the transfer protocol (docs/protocol.md): solos first, each skill arm after its own
    source, transient failures retried, everything stored as it happens. Running the same
    command again reuses finished trials and reruns failed ones; trials of the experiment that
    the plan no longer holds are retired (archived, out of the statistics).

    Exit status: 0 when every trial is resolved, 1 when some failed or are blocked, 2 on errors."""
    from ..experiments import Experiment, resolve_device

    if workload not in (None, "small", "full"):
        raise _bad("--workload", f"'{workload}' is not one of small, full")
    console = _state.console()
    suite = _state.load_suite()
    chosen = suite.select(globs=_split(problems), families=_split(families))
    if not chosen:
        raise _bad("--problems", "no problem matches --problems and --families")
    # On Ray the GPUs are the cluster's, not this machine's: auto means cuda there.
    resolved_device = "cuda" if ray_address is not None and device == "auto" else resolve_device(device)
    if executor is None and not dry_run:
        # Before anything is created: no store, no workspace is left by a run that cannot start.
        preflight(model, device, resolved_device, gpus, ray_address)
    exp = Experiment(
        name=experiment or model,
        model=model,
        problems=[p.slug for p in chosen],
        arms=_arms(_split(arms)),
        replicates=replicates,
        concurrency=concurrency,
        workload=workload or ("full" if resolved_device == "cuda" else "small"),
        device=resolved_device,
    )

    runner = load_executor(executor) if executor else None
    if dry_run:
        frame = exp.plan(store, suite=suite, rerun_stale=rerun_stale, executor=runner)
        solos = int((frame["skill_source"] == "none").sum())
        title = (
            f"plan of '{exp.name}': {len(chosen)} problems x {len(exp.arms)} arms x {replicates} "
            f"replicates = {len(frame)} trials ({solos} solos first, {len(frame) - solos} "
            f"conditioned; each waits for the trial it depends on) · store {store}"
        )
        console.print(plan_table(frame, title))
        counts = frame["action"].value_counts().to_dict()
        console.print("actions: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), highlight=False)
        if counts.get("stale") and not rerun_stale:
            console.print("[yellow]stale trials would stop the run: add --rerun-stale to rerun them[/]")
        outside = frame.attrs.get("outside_plan", [])
        if outside:
            console.print(
                f"[yellow]{len(outside)} stored trials of '{_state.esc(exp.name)}' are outside this plan: "
                "a run would retire them (archive their tries; they leave the statistics)[/]",
                highlight=False,
                soft_wrap=True,
            )
        return

    backend = None
    if runner is None and ray_address is not None:
        from ..distributed import RayBackend

        backend = RayBackend(
            ray_address,
            suite_root=suite.root,
            device=resolved_device,
            workspace_root=workspaces_for(store).resolve(),
            executor_options={"store_path": str(store.resolve())},
        )
        runner = backend.executor
        console.print(
            f"[bold]ray[/] {len(backend.actors)} GPU actors (one per GPU), attempts as tasks on any node",
            highlight=False,
        )
    if runner is None:
        from ..experiments import agent_executor

        runner = agent_executor(
            model,
            suite=suite,
            device=resolved_device,
            workspace_root=workspaces_for(store),
            store_path=store,
            gpus=gpus,
        )
    console.print(
        f"[bold]mkb run[/] experiment '{exp.name}' · model {model} · {len(chosen)} problems x "
        f"{len(exp.arms)} arms x {replicates} · {exp.workload} workload on {resolved_device} · "
        f"store {store}",
        highlight=False,
        soft_wrap=True,
    )
    try:
        result = run_with_progress(
            exp,
            store,
            runner,
            rerun_stale=rerun_stale,
            console=console,
            title=f"{exp.name}: running attempts",
        )
    finally:
        if backend is not None:
            backend.close()
    console.print(results_table(result.trials, f"final regrade per trial ({store})"))
    print_summary(console, result)
    raise typer.Exit(0 if result.complete else 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(typer.run(run))
