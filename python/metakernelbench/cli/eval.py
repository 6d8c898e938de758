"""`mkb eval`: judge one kernel.py, as an agent's submission would be judged."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state


def _parse_bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise typer.BadParameter(f"'{text}' is not a size (e.g. 8GiB, 512M, 1000000)") from None


def judge_config(
    draws: int | None = None,
    timing_draws: int | None = None,
    warmup: int | None = None,
    no_timing: bool = False,
    permissive: bool = False,
    call_timeout: float | None = None,
    memory_limit: str | None = None,
    allow: list[str] | None = None,
    no_dsl_rule: bool = False,
    pin_cpu: int | None = None,
) -> dict:
    """The JudgeConfig (as a dict for mkb.evaluate) that `mkb eval`'s options give."""
    config: dict = {}
    for key, value in (
        ("correctness_draws", draws),
        ("timing_draws", timing_draws),
        ("warmup_calls", warmup),
        ("call_timeout_s", call_timeout),
        ("pin_cpu", pin_cpu),
    ):
        if value is not None:
            config[key] = value
    if no_timing:
        config["skip_timing"] = True
    if permissive or allow or no_dsl_rule:
        config["policy"] = {"permissive": permissive, "allow": list(allow or [])}
    if no_dsl_rule:
        config["policy"]["require_dsl"] = False
    if memory_limit is not None:
        config["memory_limit_bytes"] = _parse_bytes(memory_limit)
    return config


def eval_kernel(
    kernel: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="The kernel.py to judge."
    ),
    problem: str = typer.Option(..., "--problem", "--problems", "-p", help="Problem slug or number."),
    dsl: str = typer.Option(..., "--dsl", help="The variant's DSL: cutedsl or tirx."),
    device: str = _state.device_option(),
    workload: str | None = typer.Option(
        None, "--workload", help="full or small (default: full on CUDA, small on CPU)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the Verdict as JSON. " + _state.JSON_NULLS),
    draws: int | None = typer.Option(None, "--draws", help="Correctness draws (default 5)."),
    timing_draws: int | None = typer.Option(None, "--timing-draws", help="Timing draws (default 50)."),
    warmup: int | None = typer.Option(None, "--warmup", help="Warm-up calls (default 10)."),
    no_timing: bool = typer.Option(False, "--no-timing", help="Check correctness only."),
    permissive: bool = typer.Option(False, "--permissive", help="Static audit findings become warnings."),
    call_timeout: float | None = typer.Option(
        None, "--call-timeout", help="Seconds one solve call may take."
    ),
    memory_limit: str | None = typer.Option(
        None, "--memory-limit", help="Host memory of the worker, e.g. 16GiB."
    ),
    allow: list[str] | None = typer.Option(
        None, "--allow", help="Downgrade an audit finding code to a warning."
    ),
    no_dsl_rule: bool = typer.Option(
        False,
        "--no-dsl-rule",
        help="Waive the DSL rule (policy require_dsl false): an eager kernel is judged as any other.",
    ),
    pin_cpu: int | None = typer.Option(
        None, "--pin-cpu", help="Run the judge's host and worker on this CPU (config pin_cpu)."
    ),
) -> None:
    """Judge KERNEL on a problem and print the report (or the Verdict with --json).

    Exit status: 0 when the kernel passed (or was correct with --no-timing), 1 when it did not,
    2 when the judge could not run."""
    from .. import evaluate, report

    if dsl not in ("cutedsl", "tirx"):
        raise typer.BadParameter(f"'{dsl}' is not one of cutedsl, tirx", param_hint="--dsl")
    config = judge_config(
        draws=draws,
        timing_draws=timing_draws,
        warmup=warmup,
        no_timing=no_timing,
        permissive=permissive,
        call_timeout=call_timeout,
        memory_limit=memory_limit,
        allow=allow,
        no_dsl_rule=no_dsl_rule,
        pin_cpu=pin_cpu,
    )
    suite = _state.load_suite()
    verdict = evaluate(suite.find(problem), dsl, path=kernel, device=device, workload=workload, config=config)
    if as_json:
        _state.print_json(verdict.to_dict())
    else:
        print(report(verdict), end="")
    ok = verdict.passed or (no_timing and verdict.correct)
    raise typer.Exit(0 if ok else 1)
