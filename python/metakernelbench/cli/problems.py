"""`mkb problems`: browse the suite."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.markdown import Markdown
from rich.table import Table

from .. import _core
from . import _state

app = typer.Typer(help="Browse the problem suite.", no_args_is_help=True)


def _human(n: float, unit: str = "") -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {suffix}{unit}"
    return f"{n:.3g} {unit}".strip()


def _summary(p) -> dict:
    return {
        "number": p.number,
        "slug": p.slug,
        "family": p.family,
        "title": p.title,
        "source": p.message.provenance.source,
        "model": p.message.provenance.model,
        "fingerprint": p.fingerprint,
        "workloads": {
            w.name: {
                "description": w.description,
                "params": dict(w.params),
                "flops": w.roofline.flops,
                "min_bytes": w.roofline.min_bytes,
                "peak_memory_bytes": w.peak_memory_bytes,
            }
            for w in p.message.workloads
        },
    }


@app.command("list")
def list_problems(
    family: Optional[list[str]] = typer.Option(None, "--family", "-f", help="Only these families."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the problems of the suite with their families and roofline facts."""
    suite = _state.load_suite()
    problems = suite.select(families=family or ())
    if as_json:
        print(json.dumps([_summary(p) for p in problems], indent=2))
        return
    table = Table(title=f"{len(problems)} problems ({suite.root})", title_justify="left")
    for column, justify in (("#", "right"), ("slug", "left"), ("family", "left"), ("src", "left"),
                            ("full workload", "left"), ("flops", "right"), ("min bytes", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for p in problems:
        full = p.workload("full")
        table.add_row(f"{p.number:02d}", p.slug, p.family, p.message.provenance.source, full.description,
                      _human(full.roofline.flops), _human(full.roofline.min_bytes, "B"))
    _state.console().print(table)


@app.command("show")
def show(
    slug: str = typer.Argument(..., help="Slug or number of the problem."),
    as_json: bool = typer.Option(False, "--json", help="Print the problem as JSON."),
) -> None:
    """Show one problem: description, tensors, workloads, provenance."""
    p = _state.load_suite().find(slug)
    if as_json:
        print(json.dumps(p.to_dict(), indent=2))
        return
    console = _state.console()
    console.print(f"[bold]{p.number:02d} {p.slug}[/]  ({p.family})")
    console.print(p.title)
    console.print(Markdown(p.description))
    tensors = Table(title="contract", title_justify="left")
    for column in ("", "name", "dtype", "shape", "notes"):
        tensors.add_column(column)
    for kind, specs in (("in", p.message.inputs), ("out", p.message.outputs)):
        for t in specs:
            notes = ", ".join(x for x in (t.description, "updated in place" if t.in_place else "",
                                          "exact" if t.exact else "") if x)
            if t.scalar:
                type_name = _core.python_scalar_type(t.dtype)
                literal = _core.python_scalar_literal(t.dtype, t.value) if t.value is not None else None
                fixed = f", always {literal}" if literal is not None else ""
                notes = ", ".join(x for x in (t.description, f"a Python {type_name}{fixed}") if x)
                tensors.add_row(kind, t.name, type_name, "scalar", notes)
                continue
            tensors.add_row(kind, t.name, t.dtype, "[" + ", ".join(t.shape) + "]", notes)
    console.print(tensors)
    workloads = Table(title="workloads", title_justify="left")
    for column in ("name", "description", "flops", "min bytes", "peak memory"):
        workloads.add_column(column)
    for w in p.message.workloads:
        workloads.add_row(w.name, w.description, _human(w.roofline.flops), _human(w.roofline.min_bytes, "B"),
                          _human(w.peak_memory_bytes, "B"))
    console.print(workloads)
    prov = p.message.provenance
    console.print(f"source: {prov.source} · model: {prov.model}\n  {prov.location}\n  {prov.url}\n"
                  f"licence: {prov.license}")
    for invariant in p.message.invariants:
        console.print(f"invariant: {invariant}")
    console.print(f"folder: {p.directory}\nfingerprint: {p.fingerprint}")
