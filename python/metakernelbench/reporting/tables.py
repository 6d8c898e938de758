"""The report's tables as plain rows of text, for the terminal (rich), HTML and Markdown alike.

Every number comes from the StatsReport (docs/statistics.md); this module only chooses rows and
formats them. Intervals are BCa, or percentile where BCa is undefined (marked †).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .data import StoreStats

_LEVEL_KEYS = ("model", "direction", "family")


@dataclass
class DisplayTable:
    """A table ready to print: `align` holds "l" or "r" per column."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    align: list[str]
    notes: list[str] = field(default_factory=list)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: Any, signed: bool = False, digits: int = 0) -> str:
    if _missing(x):
        return "–"
    return f"{x:+.{digits}%}" if signed else f"{x:.{digits}%}"


def num(x: Any, digits: int = 2) -> str:
    return "–" if _missing(x) else f"{x:.{digits}f}"


def pvalue(x: Any) -> str:
    if _missing(x):
        return "–"
    return "<0.001" if x < 0.001 else f"{x:.3f}" if x < 0.01 else f"{x:.2f}"


def human(n: Any) -> str:
    if _missing(n):
        return "–"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.0f}"


def interval(low: Any, high: Any, signed: bool = True, digits: int = 0) -> str:
    if _missing(low) or _missing(high):
        return ""
    return f" [{pct(low, signed, digits)}, {pct(high, signed, digits)}]"


def _estimate(row: Any, name: str, signed: bool) -> str:
    text = pct(getattr(row, name), signed) + interval(
        getattr(row, f"{name}_bca_low"), getattr(row, f"{name}_bca_high"), signed
    )
    return text + (" †" if getattr(row, f"{name}_bca_fallback") and text != "–" else "")


def group_label(row: Any, level: str) -> str:
    """The group of a lift / standing row as "model · direction · family" (its level's keys)."""
    if level == "overall":
        return "all"
    return " · ".join(str(getattr(row, key)) for key in _LEVEL_KEYS if key in level.split(","))


def overview(stats: StoreStats) -> DisplayTable:
    report = stats.report
    config = report.config
    counts = report.counts
    rows = []
    if stats.store is not None:
        rows.append(["store", str(stats.store)])
    if stats.experiments:
        rows.append(["experiments", ", ".join(stats.experiments)])
    rows.append(["models", ", ".join(stats.models) or "–"])
    rows.append(["cell-replicates", f"{counts['n_cells']} ({counts['n_resolved']} resolved: compared)"])
    if counts["n_with_control"]:
        rows.append(["with a second solo (control)", str(counts["n_with_control"])])
    tau = config["tau"]
    source = {
        "config": "configured",
        "replicate_spread": "from solo-vs-solo replicate spread",
        "default": "default, ln 1.05",
    }
    rows.append(
        [
            "τ (help / harm threshold on d)",
            f"{tau:.4f} = ln {math.exp(tau):.3f} ({source.get(config['tau_source'], config['tau_source'])}; "
            f"{config['tau_pairs']} replicate pairs)",
        ]
    )
    rows.append(
        [
            "quality q",
            f"ln(clip(speedup, {config['clip_low']:g}, {config['clip_high']:g})) if passed, else "
            f"ln({config['failure_floor']:g})",
        ]
    )
    rows.append(
        [
            "intervals",
            f"{report.config['confidence']:.0%}; bootstrap over problems, {config['bootstrap_resamples']} "
            f"resamples, seed {config['seed']}",
        ]
    )
    noise = report.measurement_noise
    rows.append(["measurement noise", noise.get("note") or "–"])
    return DisplayTable("overview", "Overview", ["", ""], rows, ["l", "l"], notes=list(stats.notes))


def aggregates(stats: StoreStats, models: str = "pooled") -> DisplayTable:
    """R@t and S (the published harness's aggregates). models: "pooled" (model *), "each"
    (every model, all splits) or "all_split" (every model and *, split all only)."""
    frame = stats.report.aggregates
    frame = frame[frame["split"] != "by_cell"]  # the per-cell table (cells) shows those
    thresholds = [c for c in frame.columns if c.startswith("R@")]
    if models == "pooled":
        frame = frame[frame["model"] == "*"]
    elif models == "all_split":
        frame = frame[frame["split"] == "all"]
    show_model = models != "pooled"
    columns = (["model"] if show_model else []) + [
        "split",
        "group",
        "arm",
        "n",
        *thresholds,
        "S",
        "cells",
        "src ok",
        "skill",
    ]
    rows = []
    for row in frame.to_dict("records"):
        signed = row["arm"] == "lift"
        values = ([row["model"]] if show_model else []) + [
            row["split"],
            row["group"],
            row["arm"],
            str(row["n"]),
        ]
        for t in thresholds:
            values.append("–" if _missing(row[t]) else (f"{row[t]:+.2f}" if signed else f"{row[t]:.2f}"))
        values.append("–" if _missing(row["S"]) else (f"{row['S']:+.1f}" if signed else f"{row['S']:.1f}"))
        if row["arm"] == "base":  # the group's: said once
            values += [str(row["n_cell_replicates"]), pct(row["source_coverage"]), pct(row["skill_coverage"])]
        else:
            values += ["", "", ""]
        rows.append(values)
    title = "R@t and S over resolved cell-replicates (the published harness's aggregates)"
    if models == "pooled":
        title += ", all models pooled"
    notes = [
        "R@t: share passed with speedup ≥ t; S = 100 × mean of the five; lift = skill − base; a skipped "
        "skill arm counts as its base. cells: the group's cell-replicates, resolved or not (n: resolved); "
        "src ok: share whose source passed (source coverage); skill: share whose source left a skill "
        "(skill coverage)."
    ]
    return DisplayTable(
        "aggregates",
        title,
        columns,
        rows,
        ["l"] * (columns.index("n")) + ["r"] * (len(columns) - columns.index("n")),
        notes,
    )


def cells(stats: StoreStats) -> DisplayTable:
    """R@t and S per cell (problem x direction), all models pooled: the harness's per-cell rows."""
    frame = stats.report.aggregates
    frame = frame[(frame["split"] == "by_cell") & (frame["model"] == "*")]
    thresholds = [c for c in frame.columns if c.startswith("R@")]
    columns = [
        "problem",
        "direction",
        "n",
        "cells",
        "S base",
        "S skill",
        "S lift",
        *[f"{t} lift" for t in thresholds],
    ]
    rows = []
    for group, sub in frame.groupby("group", sort=False):
        by_arm = sub.set_index("arm")
        problem, direction = group.rsplit("/", 1)
        base, skill, lift_row = by_arm.loc["base"], by_arm.loc["skill"], by_arm.loc["lift"]
        rows.append(
            [
                problem,
                direction,
                str(base["n"]),
                str(base["n_cell_replicates"]),
                num(base["S"], 1),
                num(skill["S"], 1),
                "–" if _missing(lift_row["S"]) else f"{lift_row['S']:+.1f}",
                *["–" if _missing(lift_row[t]) else f"{lift_row[t]:+.2f}" for t in thresholds],
            ]
        )
    notes = ["n: resolved cell-replicates of the cell; cells: all of them; lift = skill − base."]
    return DisplayTable(
        "cells",
        "R@t and S per cell (problem × direction)",
        columns,
        rows,
        ["l", "l"] + ["r"] * (len(columns) - 2),
        notes,
    )


def rt_lift(
    stats: StoreStats, levels: tuple[str, ...] = ("overall", "model", "direction", "model,direction")
) -> DisplayTable:
    """The harness's headline, R@t and S lifts, with cluster-bootstrap intervals over problems."""
    frame = stats.report.lift
    frame = frame[frame["level"].isin(levels) & (frame["arm"] == "skill")]
    thresholds = [c[: -len("_lift")] for c in frame.columns if c.startswith("R@") and c.endswith("_lift")]
    columns = ["level", "group", "problems", "S lift [CI]", *[f"{t} lift [CI]" for t in thresholds]]
    rows = []
    fallback = False
    for row in frame.to_dict("records"):
        values = [row["level"], group_label(_Row(row), row["level"]), str(row["n_problems"])]
        s = row["s_lift"]
        text = "–" if _missing(s) else f"{s:+.1f}"
        if not _missing(row["s_lift_bca_low"]):
            text += f" [{row['s_lift_bca_low']:+.1f}, {row['s_lift_bca_high']:+.1f}]"
        values.append(text)
        fallback |= bool(row["s_lift_bca_fallback"])
        for t in thresholds:
            name = f"{t}_lift"
            values.append(
                "–"
                if _missing(row[name])
                else f"{row[name]:+.2f}"
                + (
                    ""
                    if _missing(row[f"{name}_bca_low"])
                    else f" [{row[f'{name}_bca_low']:+.2f}, {row[f'{name}_bca_high']:+.2f}]"
                )
            )
            fallback |= bool(row[f"{name}_bca_fallback"])
        rows.append(values)
    notes = [
        "R@t(skill) − R@t(solo) and S(skill) − S(solo) over the group's comparisons, with BCa "
        "intervals of the same problem bootstrap as ΔGM."
    ]
    if fallback:
        notes.append(
            "Where BCa is undefined (a constant bootstrap, fewer than two problems) the interval is "
            "the percentile one."
        )
    return DisplayTable(
        "rt_lift",
        "R@t and S lifts with intervals",
        columns,
        rows,
        ["l", "l"] + ["r"] * (len(columns) - 2),
        notes,
    )


class _Row:
    """A dict row read as attributes (for group_label)."""

    def __init__(self, row: dict):
        self.__dict__.update(row)


def lift(
    stats: StoreStats, levels: list[str] | None = None, arms: tuple[str, ...] = ("skill", "control")
) -> DisplayTable:
    frame = stats.report.lift
    levels = levels or stats.report.levels
    frame = frame[frame["level"].isin(levels) & frame["arm"].isin(arms)]
    order = {level: i for i, level in enumerate(levels)}
    frame = frame.assign(_order=frame["level"].map(order)).sort_values("_order", kind="stable")
    has_control = (frame["arm"] == "control").any()
    columns = (
        ["level", "group"]
        + (["arm"] if has_control else [])
        + [
            "problems",
            "pairs",
            "ΔGM [CI]",
            "help T [CI]",
            "harm H [CI]",
            "Wilcoxon p (adj)",
            "sign p (adj)",
            "McNemar p (adj)",
        ]
    )
    rows = []
    fallback = False
    for row in frame.itertuples(index=False):
        values = [row.level, group_label(row, row.level)] + ([row.arm] if has_control else [])
        values += [str(row.n_problems), str(row.n_comparisons)]
        values += [
            _estimate(row, "delta_gm", True),
            _estimate(row, "help_rate", False),
            _estimate(row, "harm_rate", False),
        ]
        fallback |= bool(
            row.delta_gm_bca_fallback or row.help_rate_bca_fallback or row.harm_rate_bca_fallback
        )
        for test in ("wilcoxon", "sign", "mcnemar"):
            p, adjusted = getattr(row, f"{test}_p_value"), getattr(row, f"{test}_p_adjusted")
            same = _missing(p) or _missing(adjusted) or abs(p - adjusted) < 1e-12
            values.append(pvalue(p) if same else f"{pvalue(p)} ({pvalue(adjusted)})")
        rows.append(values)
    notes = [
        "ΔGM = exp(mean d) − 1, d = q(skill) − q(solo); T / H: share of pairs with d > τ / d < −τ. "
        "Tests on per-problem mean d (Wilcoxon signed-rank, sign) and on pass / fail (exact McNemar); "
        "adjusted: Holm across the groups of a level, Benjamini–Hochberg across families."
    ]
    if has_control:
        notes.append(
            "arm control: a second solo in place of the skill-conditioned attempt (regression to the mean)."
        )
    if fallback:
        notes.append(
            "†: percentile interval (BCa undefined: fewer than two problems, or a constant bootstrap)."
        )
    align = ["l"] * (3 if has_control else 2) + ["r"] * (len(columns) - (3 if has_control else 2))
    return DisplayTable("lift", "Paired lift of the skill over its solo", columns, rows, align, notes)


def standing(stats: StoreStats, levels: list[str] | None = None) -> DisplayTable:
    frame = stats.report.standing
    levels = levels or stats.report.levels
    frame = frame[frame["level"].isin(levels)]
    order = {level: i for i, level in enumerate(levels)}
    frame = frame.assign(_order=frame["level"].map(order)).sort_values("_order", kind="stable")
    has_control = (frame["arm"] == "control").any()
    columns = (
        ["level", "group"]
        + (["arm"] if has_control else [])
        + [
            "source stood",
            "n",
            "helped [CI]",
            "harmed [CI]",
            "ΔGM [CI]",
        ]
    )
    rows = []
    for row in frame.itertuples(index=False):
        values = [row.level, group_label(row, row.level)] + ([row.arm] if has_control else [])
        values += [row.standing, str(row.n)]
        if row.n == 0:
            values += ["–", "–", "–"]
        else:
            values.append(pct(row.help_rate) + interval(row.help_low, row.help_high, False))
            values.append(pct(row.harm_rate) + interval(row.harm_low, row.harm_high, False))
            values.append(
                pct(row.delta_gm, True)
                + interval(row.delta_gm_low, row.delta_gm_high, True)
                + (" †" if row.delta_gm_bca_fallback else "")
            )
        rows.append(values)
    notes = [
        "Source stood above / level / below: the source attempt's tier against the target's solo tier "
        "(tier = thresholds of R@t cleared). Helped / harmed: Wilson intervals; ΔGM: problem bootstrap "
        "(BCa; † percentile)."
    ]
    if has_control:
        notes.append(
            "arm control: the same with a second solo in place of the skill (regression-to-the-mean control)."
        )
    align = ["l"] * (4 if has_control else 3) + ["r"] * 4
    return DisplayTable("standing", "Transfer by relative standing", columns, rows, align, notes)


def usage(stats: StoreStats) -> DisplayTable:
    from .figures import ordered_arms

    frame = stats.report.usage
    if len(stats.models) <= 1:
        frame = frame[frame["model"] == "*"]
    rank = {arm: i for i, arm in enumerate(ordered_arms(frame["arm"]))}
    frame = frame.assign(_rank=frame["arm"].map(rank), _star=frame["model"] == "*")
    frame = frame.sort_values(["_star", "model", "_rank"], kind="stable")
    columns = [
        "model",
        "arm",
        "ran",
        "not run",
        "skipped",
        "input tok",
        "cached",
        "output tok",
        "cost $",
        "agent s",
        "mean in",
        "mean out",
        "mean $",
        "mean s",
    ]
    rows = []
    for row in frame.itertuples(index=False):
        rows.append(
            [
                row.model if len(stats.models) > 1 else (stats.models[0] if stats.models else "*"),
                row.arm,
                str(row.attempts) + (f" ({row.unresolved} unresolved)" if row.unresolved else ""),
                str(row.not_run) + (f" ({row.blocked} blocked)" if row.blocked else ""),
                str(row.skipped),
                human(row.input_tokens),
                human(row.cached_input_tokens),
                human(row.output_tokens),
                num(row.cost_usd, 2)
                + (
                    f" ({num(row.interrupted_cost_usd, 2)} in {row.interrupted_tries} interrupted)"
                    if row.interrupted_tries
                    else ""
                ),
                human(row.agent_seconds),
                human(row.mean_input_tokens),
                human(row.mean_output_tokens),
                num(row.mean_cost_usd, 3),
                human(row.mean_agent_seconds),
            ]
        )
    notes = [
        "Each attempt counted once (a solo is the source of one direction and the base of the other). "
        "ran: attempts that ran (finished, or unresolved after spending tokens); not run: blocked by a "
        "failed or missing source, pending, or failed before any usage — in no total or mean. Totals "
        "include the usage of interrupted tries (killed, retried or failed), said in the cost column; "
        "means over attempts that ran."
    ]
    return DisplayTable("usage", "Usage and cost per arm", columns, rows, ["l", "l"] + ["r"] * 12, notes)


def tiers(stats: StoreStats) -> DisplayTable:
    frame = stats.report.tiers
    names = [c for c in frame.columns if c.startswith("tier_")]
    columns = ["model", "role", "n", *[c.replace("tier_", "tier ") for c in names]]
    rows = [
        [row.model, row.role, str(row.n), *[str(getattr(row, n)) for n in names]]
        for row in frame.itertuples(index=False)
    ]
    notes = ["Tier: how many of the R@t thresholds an attempt clears (0: failed)."]
    return DisplayTable(
        "tiers",
        "Tiers of the attempts compared",
        columns,
        rows,
        ["l", "l"] + ["r"] * (len(columns) - 2),
        notes,
    )


def problems(stats: StoreStats, level: str = "overall") -> DisplayTable:
    frame = stats.report.problems
    frame = frame[(frame["level"] == level) & (frame["arm"] == "skill")].sort_values(
        "mean_d", ascending=False
    )
    columns = ["problem", "family", "pairs", "lift", "helped", "harmed"]
    rows = [
        [
            row.problem_slug,
            row.problem_family,
            str(row.n_comparisons),
            pct(row.lift, True),
            str(row.n_help),
            str(row.n_harm),
        ]
        for row in frame.itertuples(index=False)
    ]
    return DisplayTable(
        "problems",
        "Paired lift by problem (all models and directions pooled)",
        columns,
        rows,
        ["l", "l", "r", "r", "r", "r"],
        ["lift = exp(mean d) − 1 over the problem's pairs."],
    )
