"""report.html (self-contained: figures as PNG data URIs, inline CSS, no script) and report.md
(figures as PNG files beside it) from the same tables and figures."""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .. import _core
from . import tables as t
from .data import StoreStats
from .figures import Plot

_CSS = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #222; max-width: 1180px; margin: 2em auto; padding: 0 1.2em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
.meta { color: #666; }
table { border-collapse: collapse; margin: 0.6em 0 0.4em; font-size: 12.5px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e4e4e4; white-space: nowrap; }
th { background: #f5f5f5; text-align: left; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 12.5px; margin: 0.2em 0; }
.warn { color: #8a4b08; background: #fff6e5; padding: 0.4em 0.7em; border-left: 3px solid #e0a030; }
figure { margin: 1.4em 0 2em; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 13px; max-width: 980px; }
details > summary { cursor: pointer; color: #1f5fa8; margin: 0.6em 0; }
.scroll { overflow-x: auto; }
"""


@dataclass
class ReportFiles:
    """What write_report wrote."""

    html: Path
    markdown: Path
    json: Path
    figures: list[Path]
    plots: list[Plot]


def _table_html(table: t.DisplayTable) -> str:
    head = "".join(
        f'<th class="{a}">{html.escape(c)}</th>' for c, a in zip(table.columns, table.align, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{a}">{html.escape(v)}</td>' for v, a in zip(row, table.align, strict=True))
        + "</tr>"
        for row in table.rows
    )
    if not table.rows:
        body = f'<tr><td colspan="{len(table.columns)}">(no rows)</td></tr>'
    thead = "" if not any(table.columns) else f"<thead><tr>{head}</tr></thead>"
    notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in table.notes)
    return (
        f'<div class="scroll"><table id="table-{table.key}">{thead}<tbody>{body}</tbody></table></div>{notes}'
    )


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ") or " "


def _table_md(table: t.DisplayTable) -> str:
    columns = [c or " " for c in table.columns]
    lines = [
        "| " + " | ".join(_md_cell(c) for c in columns) + " |",
        "|" + "|".join("---:" if a == "r" else ":---" for a in table.align) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in table.rows]
    if not table.rows:
        lines.append("| (no rows) |" + " |" * (len(columns) - 1))
    out = "\n".join(lines) + "\n"
    for note in table.notes:
        out += f"\n{note}\n"
    return out


def report_tables(stats: StoreStats) -> dict[str, t.DisplayTable]:
    """The tables of a report, by key, in report order."""
    out = {
        "overview": t.overview(stats),
        "aggregates": t.aggregates(stats, "pooled"),
        "cells": t.cells(stats),
        "rt_lift": t.rt_lift(stats),
        "lift": t.lift(stats),
        "standing": t.standing(stats),
        "usage": t.usage(stats),
        "tiers": t.tiers(stats),
        "problems": t.problems(stats),
    }
    if len(stats.models) > 1:
        per_model = t.aggregates(stats, "each")
        per_model.key = "aggregates_by_model"
        per_model.title = "R@t and S per model"
        out["aggregates_by_model"] = per_model
    return out


_SECTIONS = (
    ("aggregates", "The published harness's aggregates", False),
    ("aggregates_by_model", "", True),
    ("cells", "", True),
    ("rt_lift", "", True),
    ("lift", "Paired lift and tests", False),
    ("standing", "Relative standing", False),
    ("problems", "", True),
    ("usage", "Usage and cost", False),
    ("tiers", "", True),
)


def write_report(
    stats: StoreStats, plots: list[Plot], out: str | os.PathLike, *, title: str | None = None, dpi: int = 110
) -> ReportFiles:
    """Writes <out>/report.html, <out>/report.md with <out>/<figure>.png beside it, and
    <out>/stats.json (the JSON report of docs/statistics.md)."""
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _core.PermissionDeniedError(f"{folder}: cannot create the folder: {error.strerror}") from None
    tables = report_tables(stats)
    title = title or "MetaKernelBench report"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    source = str(stats.store) if stats.store is not None else "cells"
    small = stats.report.counts["n_resolved"] == 0
    few = (
        not small and int(stats.report.lift[stats.report.lift["level"] == "overall"]["n_problems"].max()) < 10
    )

    pngs = {plot.name: plot.png(dpi) for plot in plots}
    figure_paths = []
    for plot in plots:
        path = folder / f"{plot.name}.png"
        path.write_bytes(pngs[plot.name])
        figure_paths.append(path)

    # HTML
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{html.escape(source)} · generated {stamp} by metakernelbench '
        f"{html.escape(_core.__version__)}</p>",
    ]
    if small:
        parts.append(
            '<p class="warn">No resolved comparison yet: the figures and tables below are empty.</p>'
        )
    elif few:
        parts.append(
            '<p class="warn">Fewer than 10 problems: the intervals are wide, and some are degenerate; '
            "read this as a check of the pipeline, not a finding.</p>"
        )
    parts.append(_table_html(tables["overview"]))
    parts.append("<h2>Figures</h2>")
    for plot in plots:
        data = base64.b64encode(pngs[plot.name]).decode()
        note = f'<p class="warn">{html.escape(plot.note)}</p>' if plot.note else ""
        parts.append(
            f'<figure id="{plot.name}">{note}<img class="mkb-figure" id="fig-{plot.name}" '
            f'alt="{html.escape(plot.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption><b>{html.escape(plot.title)}.</b> {html.escape(plot.caption)}</figcaption></figure>"
        )
    for key, heading, folded in _SECTIONS:
        if key not in tables:
            continue
        table = tables[key]
        body = f"<h3>{html.escape(table.title)}</h3>{_table_html(table)}"
        if folded:
            parts.append(
                f"<details><summary>{html.escape(table.title)} ({len(table.rows)} rows)</summary>"
                f"{_table_html(table)}</details>"
            )
        else:
            parts.append(f"<h2>{html.escape(heading)}</h2>{body}")
    parts.append(
        '<p class="note">Formulas and every column: docs/statistics.md. The numbers are in stats.json beside '
        "this file; the store's tables export with <code>mkb export</code>.</p></body></html>"
    )
    html_path = folder / "report.html"
    html_path.write_text("\n".join(parts), encoding="utf-8")

    # Markdown
    md = [f"# {title}", "", f"{source} · generated {stamp} by metakernelbench {_core.__version__}", ""]
    if small:
        md += ["> No resolved comparison yet: the figures and tables below are empty.", ""]
    elif few:
        md += [
            "> Fewer than 10 problems: the intervals are wide, and some are degenerate; read this as a check "
            "of the pipeline, not a finding.",
            "",
        ]
    md += [_table_md(tables["overview"]), "## Figures", ""]
    for plot in plots:
        md += [f"### {plot.title}", ""]
        if plot.note:
            md += [f"> {plot.note}", ""]
        md += [f"![{plot.title}]({plot.name}.png)", "", plot.caption, ""]
    for key, heading, _folded in _SECTIONS:
        if key not in tables:
            continue
        table = tables[key]
        if heading:
            md += [f"## {heading}", ""]
        md += [f"### {table.title}", "", _table_md(table)]
    md += [
        "Formulas and every column: docs/statistics.md. The numbers are in stats.json beside this file.",
        "",
    ]
    md_path = folder / "report.md"
    md_path.write_text("\n".join(md), encoding="utf-8")

    json_path = folder / "stats.json"
    json_path.write_text(stats.report.to_json(1) + "\n", encoding="utf-8")
    return ReportFiles(html_path, md_path, json_path, figure_paths, plots)
