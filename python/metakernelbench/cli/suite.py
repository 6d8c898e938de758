"""`mkb suite`: checks of the suite itself."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from . import _state

app = typer.Typer(help="Check the problem suite.", no_args_is_help=True)


_ROW_LOG_HELP = (
    "Write each problem's row to this JSON Lines file as it finishes; a rerun with the same file "
    "skips the problems already in it (a killed run resumes)."
)


@app.command("validate")
@_state.with_suite_option
def validate(
    device: str = _state.device_option(),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print JSON (an infinite factor is null, its candidate listed as unbounded). "
        + _state.JSON_NULLS,
    ),
    problems: list[str] | None = typer.Option(
        None, "--problems", "--problem", "-p", help="Slug globs or numbers."
    ),
    family: list[str] | None = typer.Option(
        None, "--family", "--families", "-f", help="Only these families."
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help=_ROW_LOG_HELP),
) -> None:
    """Check that every problem is well posed: its reference behaves, and trivial candidates
    (zeros, a constant, random values, an input passed through) all fail the judge's rule; on
    cuda the full workloads run too. Exit status 1 when any check fails."""
    from ..suite_check import validate_problem

    device = _state.resolve_device(device)
    suite = _state.load_suite()
    chosen = suite.select(globs=problems or (), families=family or ())
    console = _state.console()
    log = _state.RowLog(out)
    reports, reused = [], [log.rows[p.number] for p in chosen if log.done(p.number)]
    if reused and not as_json:
        console.print(f"[dim]{len(reused)} problems already in {_state.esc(out)}: skipped[/]")
    for p in chosen:
        if log.done(p.number):
            continue
        if not as_json:
            console.print(f"[dim]checking {p.number:02d} {_state.esc(p.slug)}[/]", highlight=False)
        report = validate_problem(p, device=device, full=device == "cuda")
        log.add(report.to_dict())
        reports.append(report)
    if as_json:
        _state.print_json([r.to_dict() for r in reports])
    else:
        table = Table(title=f"suite validation ({device})", title_justify="left")
        for column in (
            "#",
            "slug",
            "result",
            "zeros",
            "const",
            "random",
            "passthrough",
            "low prec.",
            "problems",
        ):
            table.add_column(column, overflow="fold")
        for r in reports:
            f = r.worst_factor
            cell = lambda k, f=f: "n/a" if k not in f else (f"{f[k]:.3g}x" if f[k] != float("inf") else "inf")  # noqa: E731
            failed = "; ".join(f"{c.name}: {c.detail}" for c in r.checks if not c.ok)
            table.add_row(
                f"{r.number:02d}",
                _state.esc(r.slug),
                "[green]ok[/]" if r.ok else "[red]FAIL[/]",
                cell("zeros"),
                cell("constant"),
                cell("random"),
                cell("passthrough"),
                cell("low_precision"),
                _state.esc(failed),
            )
        console.print(table)
        console.print(
            "Candidate columns: the least factor over the allowance across seeds (> 1: the candidate "
            "fails, as it must; low precision may pass)."
        )
    raise typer.Exit(0 if all(r.ok for r in reports) and all(row["ok"] for row in reused) else 1)


@app.command("verify-solutions")
@_state.with_suite_option
def verify_solutions(
    device: str = _state.device_option(),
    dsl: list[str] | None = typer.Option(None, "--dsl", help="Only these DSLs (default: both)."),
    problems: list[str] | None = typer.Option(
        None, "--problems", "--problem", "-p", help="Slug globs or numbers."
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="JSON table (default: benchmarks/results/solutions_<gpu>_<date>.json)."
    ),
    fresh: bool = typer.Option(False, "--fresh", help="Do not reuse rows of an existing --out."),
    call_timeout: float | None = typer.Option(
        None, "--call-timeout", help="Seconds one solve call may take (default: the judge's, 300)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON. " + _state.JSON_NULLS),
) -> None:
    """Judge every shipped solution (problems/*/*/solutions/<dsl>.py) like a submission and
    tabulate problem x DSL: verdict, speedup over eager, GPU span, % of the physical floor,
    compile time. The real check runs on cuda; on the cpu the small workload runs, for kernels
    that can run there. Rows are written as they finish; a rerun resumes. Exit status 1 when any
    solution fails or is not faster than eager."""
    import datetime as dt

    from .. import toolchains
    from .._paths import repository_root
    from ..verify import solutions, verify

    device = _state.resolve_device(device)
    dsls = tuple(toolchains.check_dsl(d) for d in dsl) if dsl else toolchains.DSLS
    suite = _state.load_suite()
    chosen = suite.select(globs=problems or ())
    if not solutions(suite, dsls, chosen):
        raise typer.BadParameter("no shipped solutions match", param_hint="--problems")
    if out is None:
        gpu = "cpu"
        if device == "cuda":
            import torch

            gpu = torch.cuda.get_device_name().split()[-1].lower()
        base = repository_root() or Path.cwd()
        out = base / "benchmarks" / "results" / f"solutions_{gpu}_{dt.date.today().isoformat()}.json"
    console = _state.console()
    config = {"call_timeout_s": call_timeout} if call_timeout else None
    table = verify(
        suite,
        out,
        device=device,
        dsls=dsls,
        problems=chosen,
        resume=not fresh,
        config=config,
        progress=lambda m: console.print(m, highlight=False, markup=False) if not as_json else None,
    )
    rows = table["rows"]
    if as_json:
        _state.print_json(table)
    else:
        t = Table(
            title=f"shipped solutions ({device}; {table['environment'].get('gpu', '')})", title_justify="left"
        )
        for column in (
            "#",
            "problem",
            "dsl",
            "verdict",
            "vs eager",
            "span",
            "span 95% CI",
            "% floor",
            "compile",
        ):
            t.add_column(column, overflow="fold")
        for r in rows:
            ok = r["passed"] and (r["speedup_vs_eager"] or 0) > 1
            fmt = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
            ci = r.get("span_ci95")
            t.add_row(
                f"{r['number']:02d}",
                _state.esc(r["slug"]),
                r["dsl"],
                ("[green]" if ok else "[red]") + r["status"] + "[/]",
                fmt(r["speedup_vs_eager"], "{:.2f}x"),
                fmt(r["span_ms"] and r["span_ms"] * 1e3, "{:.1f} us"),
                "-" if not ci else f"{ci[0] * 1e3:.1f}-{ci[1] * 1e3:.1f} us",
                fmt(r["floor_pct"], "{:.0f}%"),
                fmt(r["compile_s"], "{:.1f} s"),
            )
        console.print(t)
        console.print(f"written to {out}", highlight=False)
    good = all(r["passed"] and (r["speedup_vs_eager"] or 0) > 1 for r in rows)
    raise typer.Exit(0 if good else 1)


@app.command("compare-upstream")
def compare_upstream(
    checkout: Path = typer.Argument(..., help="A checkout of the published harness (holds problems/)."),
    device: str = _state.device_option(),
    seed: int = typer.Option(0, "--seed", help="The seed of the published draw."),
    problems: list[int] | None = typer.Option(
        None, "--problems", "--problem", "-p", help="Only these numbers."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON. " + _state.JSON_NULLS),
    out: Path | None = typer.Option(None, "--out", "-o", help=_ROW_LOG_HELP),
) -> None:
    """Compare our problems with the published files of a checkout, problem for problem.

    For each problem in both (by number): draws the published inputs, runs our reference and the
    published one on them, and reports whether the signatures match (inputs, scalars, shapes,
    dtypes, outputs, in-place updates on the full workload) and whether our output passes the
    judge's correctness rule against the published output and its float64 anchor, and the other
    way round. The published make_inputs() draw on CUDA; where no GPU is visible, the tensors they
    ask for on CUDA are made on the CPU (the same shapes, dtypes and structure; other values, and
    the slow references take minutes there). Exit status 1 when any problem differs."""
    from .. import upstream_problems as up

    device = _state.resolve_device(device)
    console = _state.console()
    log = _state.RowLog(out)
    reused = [row for n, row in log.rows.items() if not problems or n in problems]
    rows = up.compare_checkout(
        _state.load_suite(),
        checkout,
        device=device,
        seed=seed,
        numbers=problems,
        progress=None
        if as_json
        else lambda what: console.print(f"[dim]comparing {what}[/]", highlight=False),
        skip=set(log.rows),
        on_row=lambda row: log.add(row.to_dict()),
    )
    if reused and not as_json:
        console.print(f"[dim]{len(reused)} problems already in {_state.esc(out)}: skipped[/]")
    if as_json:
        _state.print_json([r.to_dict() for r in rows])
    else:
        table = Table(title=f"ours vs {checkout} ({device}, seed {seed})", title_justify="left")
        for column in ("#", "slug", "signature", "ours vs published", "published vs ours", "result"):
            table.add_column(column)

        def factor(f):
            return "-" if f is None else ("inf" if f == float("inf") else f"{f:.3g}x")

        for r in rows:
            signature = r.error or ("match" if not r.signature else "; ".join(r.signature))
            table.add_row(
                f"{r.number:02d}",
                r.slug,
                signature,
                factor(r.ours_vs_published),
                factor(r.published_vs_ours),
                "[green]match[/]" if r.matches else "[red]DIFFERS[/]",
            )
        console.print(table)
        console.print(
            "Factors: the largest error over the judge's allowance (<= 1 passes), ours judged "
            "against the published output and anchor, and the published output against ours.",
            soft_wrap=True,
        )
        if not rows:
            console.print("[yellow]no problem of the suite is in the checkout[/]")
    ok = (rows or reused) and all(r.matches for r in rows) and all(row["matches"] for row in reused)
    raise typer.Exit(0 if ok else 1)
