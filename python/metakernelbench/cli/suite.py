"""`mkb suite`: checks of the suite itself."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from . import _state

app = typer.Typer(help="Check the problem suite.", no_args_is_help=True)


@app.command("validate")
def validate(
    device: str = typer.Option("cpu", "--device", help="cpu, or cuda to also run the full workloads."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    problems: Optional[list[str]] = typer.Option(None, "--problems", "-p", help="Slug globs or numbers."),
    family: Optional[list[str]] = typer.Option(None, "--family", "-f", help="Only these families."),
) -> None:
    """Check that every problem is well posed: its reference behaves, and trivial candidates
    (zeros, a constant, random values, an input passed through) all fail the judge's rule.
    Exit status 1 when any check fails."""
    from ..suite_check import validate_problem

    if device not in ("cpu", "cuda"):
        raise typer.BadParameter(f"'{device}' is not one of cpu, cuda", param_hint="--device")
    suite = _state.load_suite()
    chosen = suite.select(globs=problems or (), families=family or ())
    console = _state.console()
    reports = []
    for p in chosen:
        if not as_json:
            console.print(f"[dim]checking {p.number:02d} {p.slug}[/]", highlight=False)
        reports.append(validate_problem(p, device=device, full=device == "cuda"))
    if as_json:
        print(json.dumps([r.to_dict() for r in reports], indent=2))
    else:
        table = Table(title=f"suite validation ({device})", title_justify="left")
        for column in ("#", "slug", "result", "zeros", "const", "random", "passthrough", "low prec.", "problems"):
            table.add_column(column)
        for r in reports:
            f = r.worst_factor
            cell = lambda k: "n/a" if k not in f else (f"{f[k]:.3g}x" if f[k] != float("inf") else "inf")  # noqa: E731
            failed = "; ".join(f"{c.name}: {c.detail}" for c in r.checks if not c.ok)
            table.add_row(f"{r.number:02d}", r.slug, "[green]ok[/]" if r.ok else "[red]FAIL[/]", cell("zeros"),
                          cell("constant"), cell("random"), cell("passthrough"), cell("low_precision"), failed)
        console.print(table)
        console.print("Candidate columns: the least factor over the allowance across seeds (> 1: the candidate "
                      "fails, as it must; low precision may pass).")
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)
