"""`mkb check`: compile a kernel.py offline (no GPU, no submission spent)."""

from __future__ import annotations

from pathlib import Path

import typer

from . import _state


def check(
    kernel: Path = typer.Argument(..., help="The kernel.py to check."),
    dsl: str = typer.Option(..., "--dsl", help="The variant's DSL: cutedsl or tirx."),
    problem: str = typer.Option(..., "--problem", "--problems", "-p", help="Problem slug or number."),
    arch: str | None = typer.Option(
        None, "--arch", help="Target, e.g. sm_90a (default: MKB_TARGET_ARCH, else this machine's GPU)."
    ),
    timeout: float = typer.Option(600, "--timeout", help="Seconds before the check is stopped."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON. " + _state.JSON_NULLS),
) -> None:
    """Parse, audit, import and compile kernel.py in its DSL's environment for the target
    architecture, with the problem's small workload, launching nothing. Errors name kernel.py's
    line. Exit status 1 when there is any error."""
    from ..dslcheck import check_arch, check_kernel, default_arch

    if arch is None:
        arch = default_arch()
        if arch is None:
            raise typer.BadParameter(
                "no GPU here and MKB_TARGET_ARCH is unset: give the target, e.g. --arch sm_90a",
                param_hint="--arch",
            )
    check_arch(arch)
    suite = _state.load_suite()
    result = check_kernel(kernel, dsl, suite.find(problem), arch, timeout_s=timeout)
    if as_json:
        _state.print_json(result.to_dict())
    else:
        console = _state.console()
        for d in result.diagnostics:
            style = "green" if not d.is_error else "red"
            line = _state.esc(d.render(kernel.name))
            console.print(f"[{style}]{line}[/]", highlight=False, soft_wrap=True)
            if d.is_error and d.detail:
                console.print(d.detail.rstrip()[-1500:], highlight=False, markup=False, soft_wrap=True)
        errors = sum(d.is_error for d in result.diagnostics)
        verdict = "[green]ok[/]" if result.ok else f"[red]{errors} error(s)[/]"
        where = _state.esc(kernel)
        console.print(
            f"{where}: {verdict} ({result.dsl}, {result.arch}, {result.seconds:.1f} s)", highlight=False
        )
    raise typer.Exit(0 if result.ok else 1)
