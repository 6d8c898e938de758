"""`mkb problems`: browse the suite."""

from __future__ import annotations

from typing import Optional

import typer
from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

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
@_state.with_suite_option
def list_problems(
    family: Optional[list[str]] = typer.Option(
        None, "--family", "--families", "-f", help="Only these families."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table. " + _state.JSON_NULLS),
) -> None:
    """List the problems of the suite with their families and roofline facts."""
    suite = _state.load_suite()
    problems = suite.select(families=family or ())
    if as_json:
        _state.print_json([_summary(p) for p in problems])
        return
    console = _state.console()
    title = f"{len(problems)} problems ({suite.root})"
    longest = max((len(p.slug) for p in problems), default=0)
    if console.width < longest + 64:
        # Too narrow for the table with whole slugs: one problem per paragraph, the slug on a line
        # of its own (a slug is what one types: never cut).
        console.print(title, style="italic", markup=False, highlight=False)
        for p in problems:
            full = p.workload("full")
            console.print(Text(f"{p.number:02d} ", style="bold") + Text(p.slug, style="bold"))
            facts = Text(f"{p.family} · {p.message.provenance.source} · {_human(full.roofline.flops)}FLOP"
                         f" · {_human(full.roofline.min_bytes, 'B')} · {full.description}")
            console.print(Padding(facts, (0, 0, 0, 3)), highlight=False)
        return
    table = Table(title=title, title_justify="left")
    for column, justify in (("#", "right"), ("slug", "left"), ("family", "left"), ("src", "left"),
                            ("full workload", "left"), ("flops", "right"), ("min bytes", "right")):
        table.add_column(column, justify=justify, overflow="fold",  # type: ignore[arg-type]
                         min_width=longest if column == "slug" else None)
    for p in problems:
        full = p.workload("full")
        table.add_row(*(Text(str(x)) for x in (
            f"{p.number:02d}", p.slug, p.family, p.message.provenance.source, full.description,
            _human(full.roofline.flops), _human(full.roofline.min_bytes, "B"))))
    console.print(table)


@app.command("show")
@_state.with_suite_option
def show(
    slug: str = typer.Argument(..., help="Slug or number of the problem."),
    as_json: bool = typer.Option(False, "--json", help="Print the problem as JSON. " + _state.JSON_NULLS),
) -> None:
    """Show one problem: description, tensors, workloads, provenance."""
    p = _state.load_suite().find(slug)
    if as_json:
        _state.print_json(p.to_dict())
        return
    console = _state.console()
    # Everything below is the problem's own text: printed as it is, never read as Rich markup
    # (a shape such as [num_tokens, hidden] is not a style).
    console.print(Text(f"{p.number:02d} {p.slug}", style="bold"), Text(f" ({p.family})"))
    console.print(p.title, markup=False)
    console.print(Markdown(p.description))
    tensors = Table(title="contract", title_justify="left")
    for column in ("", "name", "dtype", "shape", "notes"):
        tensors.add_column(column, overflow="fold")
    for kind, specs in (("in", p.message.inputs), ("out", p.message.outputs)):
        for t in specs:
            notes = ", ".join(x for x in (t.description, "updated in place" if t.in_place else "",
                                          "exact" if t.exact else "") if x)
            if t.scalar:
                type_name = _core.python_scalar_type(t.dtype)
                literal = _core.python_scalar_literal(t.dtype, t.value) if t.value is not None else None
                fixed = f", always {literal}" if literal is not None else ""
                notes = ", ".join(x for x in (t.description, f"a Python {type_name}{fixed}") if x)
                tensors.add_row(*(Text(x) for x in (kind, t.name, type_name, "scalar", notes)))
                continue
            shape = "[" + ", ".join(t.shape) + "]"
            tensors.add_row(*(Text(x) for x in (kind, t.name, t.dtype, shape, notes)))
    console.print(tensors)
    workloads = Table(title="workloads", title_justify="left")
    for column in ("name", "description", "flops", "min bytes", "peak memory"):
        workloads.add_column(column, overflow="fold")
    for w in p.message.workloads:
        workloads.add_row(*(Text(x) for x in (
            w.name, w.description, _human(w.roofline.flops), _human(w.roofline.min_bytes, "B"),
            _human(w.peak_memory_bytes, "B"))))
    console.print(workloads)
    prov = p.message.provenance
    console.print(f"source: {prov.source} · model: {prov.model}\n  {prov.location}\n  {prov.url}\n"
                  f"licence: {prov.license}", markup=False, highlight=False)
    for invariant in p.message.invariants:
        console.print(f"invariant: {invariant}", markup=False, highlight=False)
    console.print(f"folder: {p.directory}\nfingerprint: {p.fingerprint}", markup=False, highlight=False)
