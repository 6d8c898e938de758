"""Reports of a store's statistics: tables, figures, report.html and report.md.

    from metakernelbench import reporting
    stats = reporting.store_stats("results.db")             # every experiment, pooled
    for plot in reporting.figures.all_figures(stats.report):
        plot.figure.savefig(f"{plot.name}.png")
    reporting.build_report("results.db", "report/")          # what `mkb report` writes

Every number comes from metakernelbench.stats (the C++ core); this package chooses, formats and
draws. The figures use matplotlib's Agg canvas (no display needed). docs/report.md describes the
report; docs/statistics.md the numbers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import figures, tables
from .data import REPORT_LEVELS, StoreStats, cells_stats, normalize_levels, store_stats
from .figures import Plot, all_figures
from .render import ReportFiles, report_tables, write_report


def build_report(
    store: Any,
    out: str | os.PathLike,
    *,
    experiments: Sequence[str] | None = None,
    by: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    title: str | None = None,
) -> ReportFiles:
    """Computes the statistics of `store` (every experiment unless `experiments`; the levels the
    figures need plus `by`) and writes report.html, report.md, the figures and stats.json to
    `out`."""
    levels = normalize_levels(by, base=REPORT_LEVELS) or list(REPORT_LEVELS)
    stats = store_stats(store, experiments, levels=levels, config=config, confidence=confidence)
    return write_report(stats, all_figures(stats.report), out, title=title)


__all__ = [
    "REPORT_LEVELS",
    "Plot",
    "ReportFiles",
    "StoreStats",
    "all_figures",
    "build_report",
    "cells_stats",
    "figures",
    "normalize_levels",
    "report_tables",
    "store_stats",
    "tables",
    "write_report",
]
