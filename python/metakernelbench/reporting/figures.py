"""The report's figures (matplotlib, drawn on the Agg canvas: no display, no pyplot state).

Each function takes a metakernelbench.stats.StatsReport and returns a Plot: a matplotlib Figure
with a title, a caption and, when the report holds too little to draw it, a note saying so (the
figure then says the same in words, so that a report never silently lacks a figure).

    from metakernelbench.reporting import figures
    plot = figures.paired_lift_by_problem(report)
    plot.figure.savefig("lift.png")          # or plot.png() -> bytes; in a notebook, `plot` shows it

Ratios are drawn on a log2 axis: a bar of +1 is a skill-conditioned attempt twice as good as its
solo (q is the log of the clipped speedup, a failure counts as the floor; docs/statistics.md).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _core

FAMILY_COLORS = {
    "attention": "#4C72B0",
    "kv_cache": "#DD8452",
    "mlp_norm": "#55A868",
    "moe": "#C44E52",
    "quantization": "#8172B3",
    "linear_attention": "#937860",
}
DIRECTION_COLORS = {"cutedsl2tirx": "#1F77B4", "tirx2cutedsl": "#FF7F0E"}
MODEL_COLORS = ("#3B6FB6", "#E3A33B", "#6BAF5B", "#B85C9E", "#5FB7C9", "#A0724A", "#8A8A8A", "#D45D5D")
_EXTRA_COLORS = ("#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22", "#17BECF")
HELP_COLOR = "#2E8B57"
HARM_COLOR = "#C0392B"
STANDINGS = ("above", "level", "below")
ARM_ORDER = (
    "solo_cutedsl",
    "solo_tirx",
    "cutedsl2tirx_skill",
    "tirx2cutedsl_skill",
    "solo_cutedsl_control",
    "solo_tirx_control",
)


def ordered_arms(arms: Sequence[str]) -> list[str]:
    """The standard arms in their order (solos, conditioned, controls), then the others by name."""
    present = list(dict.fromkeys(arms))
    return [a for a in ARM_ORDER if a in present] + sorted(a for a in present if a not in ARM_ORDER)


@dataclass
class Plot:
    """A figure of the report. `note` is set (and drawn) when the data are too few for it."""

    name: str
    title: str
    figure: Any  # matplotlib.figure.Figure
    caption: str
    note: str | None = None

    @property
    def has_data(self) -> bool:
        return self.note is None

    def png(self, dpi: int = 110) -> bytes:
        out = io.BytesIO()
        self.figure.savefig(out, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
        return out.getvalue()

    def _repr_png_(self) -> bytes:  # shown by IPython / Jupyter
        return self.png()

    def __repr__(self) -> str:
        return f"<Plot {self.name}" + (f": {self.note}>" if self.note else ">")


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise _core.FailedPreconditionError(
            "the report's figures need matplotlib: pip install matplotlib (or metakernelbench[analysis])"
        ) from None

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def too_little_data(name: str, title: str, caption: str, reason: str) -> Plot:
    """A figure that says in words why it could not be drawn."""
    figure = _figure(9, 1.6)
    ax = figure.add_subplot()
    ax.set_axis_off()
    ax.text(0.5, 0.62, title, ha="center", va="center", fontsize=12, weight="bold", transform=ax.transAxes)
    ax.text(
        0.5,
        0.25,
        f"Too little data for this figure: {reason}",
        ha="center",
        va="center",
        fontsize=10,
        color="#8A4B08",
        wrap=True,
        transform=ax.transAxes,
    )
    return Plot(name, title, figure, caption, note=f"Too little data for this figure: {reason}")


def _color_cycle(
    keys: Sequence[str], known: dict[str, str], palette: Sequence[str] = _EXTRA_COLORS
) -> dict[str, str]:
    out, extra = {}, iter(tuple(palette) * 8)
    for key in keys:
        out[key] = known.get(key) or next(extra)
    return out


def _log2_ratio_axis(ax: Any, values: Sequence[float], axis: str = "y", as_percent: bool = False) -> None:
    """Ticks of a log2 axis labelled as ratios (×) or percent changes."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    low = math.floor(min([0.0, *finite]))
    high = math.ceil(max([0.0, *finite]))
    if high - low < 2:
        low, high = low - 1, high + 1
    step = max(1, math.ceil((high - low) / 8))
    ticks = list(range(low, high + 1, step))
    if as_percent:
        labels = [f"{2.0**t - 1:+.0%}" if t else "0%" for t in ticks]
    else:
        labels = [f"{2.0**t:g}×" if t >= 0 else f"1/{2.0**-t:g}×" for t in ticks]
    if axis == "y":
        ax.set_yticks(ticks, labels)
        ax.set_ylim(low - 0.25, high + 0.25)
    else:
        ax.set_xticks(ticks, labels)
        ax.set_xlim(low - 0.25, high + 0.25)


def _log2(x: float) -> float:
    return math.log2(x) if x is not None and x > 0 and math.isfinite(x) else float("nan")


def _pick_level(report: Any, preferred: Sequence[str]) -> str | None:
    for level in preferred:
        if level in report.levels:
            return level
    return None


def _group_key(row: Any, level: str) -> tuple[str, ...]:
    return tuple(str(getattr(row, k)) for k in ("model", "direction", "family") if k in level.split(","))


def _tau(report: Any) -> float:
    tau = report.config.get("tau")
    return float(tau) if tau is not None and math.isfinite(tau) else _core.stats.default_tau()


# ------------------------------------------------------------------------------------------------
# 1. Paired lift by problem


def paired_lift_by_problem(report: Any, level: str | None = None) -> Plot:
    """One bar per problem: exp(mean d) over its pairs (replicates), sorted, coloured by family;
    one panel per model x direction (or per direction, or pooled, as the report's levels allow)."""
    name, title = "paired_lift_by_problem", "Paired lift by problem"
    level = level or _pick_level(report, ("model,direction", "direction", "overall"))
    caption = (
        "Each bar is one problem: the skill-conditioned attempt against its solo on the same variant, "
        "exp(mean d) over the problem's replicates (log2 axis; d = q(skill) − q(solo), q = log of the "
        "clipped speedup, a failure at the floor). Sorted; coloured by family; the grey band is ±τ, where "
        "a pair counts neither as helped nor harmed."
    )
    if level is None:
        return too_little_data(
            name, title, caption, "the report has no overall, direction or model,direction level"
        )
    frame = report.problems
    frame = frame[(frame["level"] == level) & (frame["arm"] == "skill")]
    if frame.empty:
        return too_little_data(
            name, title, caption, "no resolved comparison (no pair of a solo and a skill-conditioned attempt)"
        )
    lift = report.lift
    lift = lift[(lift["level"] == level) & (lift["arm"] == "skill")]
    groups = list(dict.fromkeys(_group_key(r, level) for r in frame.itertuples(index=False)))
    ncols = 1 if len(groups) == 1 else 2
    nrows = math.ceil(len(groups) / ncols)
    most = max(int((frame.groupby(["model", "direction"]).size()).max()), 1)
    width = 10 if ncols == 2 else min(10, max(5.5, 2.5 + 0.22 * most))
    figure = _figure(width, 0.9 + 2.9 * nrows)
    tau = _tau(report) / math.log(2)
    present = set(frame["problem_family"])
    families = [f for f in FAMILY_COLORS if f in present] + sorted(present - set(FAMILY_COLORS))
    colors = _color_cycle(families, FAMILY_COLORS)
    all_values = [v / math.log(2) for v in frame["mean_d"]]
    for i, key in enumerate(groups):
        ax = figure.add_subplot(nrows, ncols, i + 1)
        rows = frame
        for k, value in zip(
            [k for k in ("model", "direction", "family") if k in level.split(",")], key, strict=True
        ):
            rows = rows[rows[k] == value]
        rows = rows.sort_values("mean_d")
        y = [v / math.log(2) for v in rows["mean_d"]]
        x = list(range(len(y)))
        ax.axhspan(-tau, tau, color="#DDDDDD", zorder=0)
        ax.axhline(0, color="#444444", linewidth=0.8, zorder=1)
        ax.bar(x, y, color=[colors[f] for f in rows["problem_family"]], width=0.8, zorder=2)
        _log2_ratio_axis(ax, all_values)
        if len(x) <= 24:
            labels = [s if len(s) <= 30 else s[:29] + "…" for s in rows["problem_slug"]]
            ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
        else:
            ax.set_xticks([])
            ax.set_xlabel(f"{len(x)} problems, sorted by lift", fontsize=8)
        ax.set_xlim(-0.7, max(len(x), 3) - 0.3)
        group = lift
        for k, value in zip(
            [k for k in ("model", "direction", "family") if k in level.split(",")], key, strict=True
        ):
            group = group[group[k] == value]
        label = " · ".join(key) if key else "all models and directions"
        if not group.empty:
            g = group.iloc[0]
            label += (
                f"\nΔGM {g['delta_gm']:+.0%}, helped {g['help_rate']:.0%}, harmed {g['harm_rate']:.0%} "
                f"({int(g['n_problems'])} problems)"
            )
        ax.set_title(label, fontsize=9)
        if i % ncols == 0:
            ax.set_ylabel("skill / solo (geometric mean)", fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
    from matplotlib.patches import Patch

    handles = [Patch(color=colors[f], label=f) for f in families]
    handles.append(Patch(color="#DDDDDD", label="±τ: neither"))
    figure.legend(
        handles=handles, loc="outside lower center", ncols=min(len(handles), 7), fontsize=8, frameon=False
    )
    figure.suptitle(title, fontsize=12, weight="bold")
    return Plot(name, title, figure, caption)


# ------------------------------------------------------------------------------------------------
# 2. Transfer by relative standing


def transfer_by_relative_standing(report: Any) -> Plot:
    """Help and harm rates (Wilson intervals) by where the source attempt stood against the
    target's solo; overall and per direction; the control arm hatched where there is one."""
    name, title = "transfer_by_relative_standing", "Transfer by relative standing"
    caption = (
        "Share of pairs the skill helped (d > τ) and harmed (d < −τ), by whether the source attempt's tier "
        "stood above, level with or below the target's solo tier (tier: how many R@t thresholds it clears); "
        "95% Wilson intervals, n under each group. Hatched, where present: a second solo in place of the "
        "skill-conditioned attempt (the regression-to-the-mean control)."
    )
    frame = report.standing
    panels: list[tuple[str, Any]] = []
    overall = frame[frame["level"] == "overall"]
    if not overall.empty:
        panels.append(("all models and directions", overall))
    if "direction" in report.levels:
        per = frame[frame["level"] == "direction"]
        for direction in dict.fromkeys(per["direction"]):
            panels.append((direction, per[per["direction"] == direction]))
    skill_n = int(overall[overall["arm"] == "skill"]["n"].sum()) if not overall.empty else 0
    if skill_n == 0:
        return too_little_data(name, title, caption, "no pair whose source attempt is resolved")
    figure = _figure(min(4.2 * len(panels), 13), 3.6)
    axes = figure.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    for ax, (label, rows) in zip(axes, panels, strict=True):
        arms = [
            a
            for a in ("skill", "control")
            if (rows["arm"] == a).any() and rows[rows["arm"] == a]["n"].sum() > 0
        ]
        width = 0.8 / (2 * len(arms))
        x_labels = []
        for xi, standing in enumerate(STANDINGS):
            ns = []
            for ai, arm in enumerate(arms):
                r = rows[(rows["standing"] == standing) & (rows["arm"] == arm)]
                if r.empty:
                    continue
                r = r.iloc[0]
                ns.append(int(r["n"]))
                for mi, (rate, low, high, color) in enumerate(
                    (
                        ("help_rate", "help_low", "help_high", HELP_COLOR),
                        ("harm_rate", "harm_low", "harm_high", HARM_COLOR),
                    )
                ):
                    position = xi - 0.4 + width * (2 * ai + mi + 0.5)
                    if int(r["n"]) == 0:
                        continue
                    value = float(r[rate])
                    err = [[max(value - float(r[low]), 0)], [max(float(r[high]) - value, 0)]]
                    ax.bar(
                        position,
                        value,
                        width * 0.92,
                        color=color,
                        alpha=1.0 if arm == "skill" else 0.45,
                        hatch=None if arm == "skill" else "//",
                        edgecolor="white" if arm == "skill" else color,
                    )
                    ax.errorbar(position, value, yerr=err, color="#333333", capsize=2, linewidth=0.8)
            x_labels.append(f"{standing}\n(n={'/'.join(map(str, ns)) or 0})")
        ax.set_xticks(range(len(STANDINGS)), x_labels, fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.yaxis.set_major_formatter(_percent_formatter())
        ax.set_title(label, fontsize=9)
        ax.grid(axis="y", color="#EEEEEE")
        ax.set_axisbelow(True)
    axes[0].set_ylabel("share of pairs", fontsize=8)
    from matplotlib.patches import Patch

    handles = [
        Patch(color=HELP_COLOR, label="helped (d > τ)"),
        Patch(color=HARM_COLOR, label="harmed (d < −τ)"),
    ]
    if (frame["arm"] == "control").any():
        handles.append(
            Patch(facecolor="white", edgecolor="#555555", hatch="//", label="control: second solo")
        )
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    figure.suptitle(f"{title}: source attempt's tier against the target's solo", fontsize=12, weight="bold")
    return Plot(name, title, figure, caption)


def _percent_formatter() -> Any:
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0, decimals=0)


# ------------------------------------------------------------------------------------------------
# 3 and 4. Forest plots: per family, per model x direction


def _forest(
    ax: Any,
    rows: Any,
    colors: list[str],
    y: list[float],
    estimate: str,
    transform: Callable[[float], float],
) -> list[float]:
    xs = []
    for i, row in enumerate(rows):
        value = transform(row[estimate])
        low = transform(row[f"{estimate}_bca_low"])
        high = transform(row[f"{estimate}_bca_high"])
        xs += [value, low, high]
        if not math.isfinite(value):
            continue
        err = [
            [max(value - low, 0) if math.isfinite(low) else 0],
            [max(high - value, 0) if math.isfinite(high) else 0],
        ]
        hollow = bool(row[f"{estimate}_bca_fallback"])
        ax.errorbar(
            value,
            y[i],
            xerr=err,
            fmt="o",
            color=colors[i],
            markerfacecolor="white" if hollow else colors[i],
            capsize=3,
            markersize=6,
            linewidth=1.2,
        )
    return xs


def lift_by_family(report: Any) -> Plot:
    """ΔGM, help rate and harm rate per family (all models and directions pooled), with
    bootstrap intervals over the family's problems."""
    name, title = "lift_per_family", "Lift per family"
    caption = (
        "ΔGM (log axis, as a percent change), help rate T and harm rate H per family, all models and "
        "directions pooled; 95% BCa bootstrap intervals over the family's problems (hollow markers: "
        "percentile interval, BCa undefined, e.g. one problem). n: problems."
    )
    if "family" not in report.levels:
        return too_little_data(name, title, caption, "the report was computed without the family level")
    frame = report.lift
    frame = frame[(frame["level"] == "family") & (frame["arm"] == "skill")]
    if frame.empty:
        return too_little_data(name, title, caption, "no resolved comparison")
    rows = frame.to_dict("records")[::-1]  # first family on top
    labels = [f"{r['family']} (n={r['n_problems']})" for r in rows]
    colors = [FAMILY_COLORS.get(r["family"], "#555555") for r in rows]
    figure = _figure(10, 1.3 + 0.42 * len(rows))
    axes = figure.subplots(1, 3, sharey=True, width_ratios=[1.4, 1, 1])
    y = list(range(len(rows)))
    xs = _forest(
        axes[0], rows, colors, y, "delta_gm", lambda v: _log2(1 + v) if v is not None else float("nan")
    )
    _log2_ratio_axis(axes[0], xs, axis="x", as_percent=True)
    axes[0].axvline(0, color="#444444", linewidth=0.8)
    axes[0].set_title("ΔGM", fontsize=9)
    for ax, estimate, head in ((axes[1], "help_rate", "helped T"), (axes[2], "harm_rate", "harmed H")):
        _forest(ax, rows, colors, y, estimate, lambda v: float(v) if v is not None else float("nan"))
        ax.set_xlim(-0.03, 1.03)
        ax.xaxis.set_major_formatter(_percent_formatter())
        ax.set_title(head, fontsize=9)
    axes[0].set_yticks(y, labels, fontsize=8)
    for ax in axes:
        ax.grid(axis="x", color="#EEEEEE")
        ax.set_axisbelow(True)
        ax.tick_params(axis="x", labelsize=8)
    figure.suptitle(title, fontsize=12, weight="bold")
    return Plot(name, title, figure, caption)


def model_by_direction(report: Any) -> Plot:
    """ΔGM, help and harm rates for every model x direction cell, with bootstrap intervals and
    the Holm-adjusted Wilcoxon p-value."""
    name, title = "model_by_direction", "Model × direction"
    caption = (
        "Paired lift ΔGM (log axis, as a percent change), help rate T and harm rate H of every model in "
        "each direction, with 95% BCa bootstrap intervals over problems (hollow: percentile interval); "
        "p: Wilcoxon signed-rank on per-problem mean d, Holm-adjusted across the model × direction cells."
    )
    if "model,direction" not in report.levels:
        return too_little_data(
            name, title, caption, "the report was computed without the model,direction level"
        )
    frame = report.lift
    frame = frame[(frame["level"] == "model,direction") & (frame["arm"] == "skill")]
    if frame.empty:
        return too_little_data(name, title, caption, "no resolved comparison")
    models = list(dict.fromkeys(frame["model"]))
    directions = list(dict.fromkeys(frame["direction"]))
    colors = _color_cycle(directions, DIRECTION_COLORS)
    offset = {d: (i - (len(directions) - 1) / 2) * 0.22 for i, d in enumerate(directions)}
    rows = frame.to_dict("records")
    y = [len(models) - 1 - models.index(r["model"]) + offset[r["direction"]] for r in rows]
    row_colors = [colors[r["direction"]] for r in rows]
    figure = _figure(10.5, 1.5 + 0.6 * len(models))
    axes = figure.subplots(1, 3, sharey=True, width_ratios=[1.5, 1, 1])
    xs = _forest(
        axes[0], rows, row_colors, y, "delta_gm", lambda v: _log2(1 + v) if v is not None else float("nan")
    )
    _log2_ratio_axis(axes[0], xs, axis="x", as_percent=True)
    axes[0].axvline(0, color="#444444", linewidth=0.8)
    for r, yi in zip(rows, y, strict=True):
        p = r["wilcoxon_p_adjusted"]
        text = f"{p:.2g}" if p is not None and math.isfinite(p) else "–"
        axes[2].annotate(
            text,
            (1.0, yi),
            xycoords=("axes fraction", "data"),
            xytext=(6, 0),
            textcoords="offset points",
            fontsize=7,
            va="center",
            color=colors[r["direction"]],
        )
    axes[2].annotate(
        "p (Holm)",
        (1.0, 1.0),
        xycoords="axes fraction",
        xytext=(6, 4),
        textcoords="offset points",
        fontsize=7,
        va="bottom",
        color="#555555",
    )
    axes[0].set_title("ΔGM", fontsize=9)
    for ax, estimate, head in ((axes[1], "help_rate", "helped T"), (axes[2], "harm_rate", "harmed H")):
        _forest(ax, rows, row_colors, y, estimate, lambda v: float(v) if v is not None else float("nan"))
        ax.set_xlim(-0.03, 1.03)
        ax.xaxis.set_major_formatter(_percent_formatter())
        ax.set_title(head, fontsize=9)
    ticks = list(range(len(models)))
    axes[0].set_yticks(ticks, [models[len(models) - 1 - t] for t in ticks], fontsize=8)
    axes[0].set_ylim(-0.6, len(models) - 0.4)
    for ax in axes:
        ax.grid(axis="x", color="#EEEEEE")
        ax.set_axisbelow(True)
        ax.tick_params(axis="x", labelsize=8)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", linestyle="", color=colors[d], label=d) for d in directions]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    figure.suptitle(title, fontsize=12, weight="bold")
    return Plot(name, title, figure, caption)


# ------------------------------------------------------------------------------------------------
# 5. Usage and cost per arm


def usage_by_arm(report: Any) -> Plot:
    """Mean tokens (cached, uncached input; output), cost and agent time per attempt, per arm
    (and per model when there are several)."""
    name, title = "usage_and_cost_per_arm", "Usage and cost per arm"
    caption = (
        "Per attempt that ran (skipped conditioned arms excluded), each attempt counted once: mean input "
        "tokens (cached part lighter) and output tokens, mean cost in USD and mean agent seconds."
    )
    frame = report.usage
    models = [m for m in dict.fromkeys(frame["model"]) if m != "*"]
    frame = frame[frame["model"] == "*"] if len(models) <= 1 else frame[frame["model"] != "*"]
    frame = frame[frame["attempts"] > 0]
    if frame.empty:
        return too_little_data(name, title, caption, "no attempt has run")
    recorded = (
        frame[["input_tokens", "output_tokens", "cost_usd", "agent_seconds"]].fillna(0).to_numpy().sum()
    )
    if recorded <= 0:
        return too_little_data(name, title, caption, "no attempt recorded tokens, cost or agent time")
    arms = ordered_arms(frame["arm"])
    groups = ["*"] if len(models) <= 1 else models
    colors = _color_cycle(groups, {"*": MODEL_COLORS[0]}, MODEL_COLORS)
    figure = _figure(11, 3.4)
    axes = figure.subplots(1, 3)
    width = 0.8 / len(groups)
    metrics = (
        (axes[0], "tokens per attempt", None),
        (axes[1], "cost per attempt (USD)", "mean_cost_usd"),
        (axes[2], "agent seconds per attempt", "mean_agent_seconds"),
    )
    for ax, head, column in metrics:
        drawn = False
        for gi, group in enumerate(groups):
            rows = frame[frame["model"] == group].set_index("arm").reindex(arms)
            x = [i - 0.4 + width * (gi + 0.5) for i in range(len(arms))]
            if column is None:
                attempts = rows["attempts"].astype(float)
                cached = (rows["cached_input_tokens"] / attempts).fillna(0)
                total_in = rows["mean_input_tokens"].fillna(0)
                out = rows["mean_output_tokens"].fillna(0)
                if float(total_in.sum() + out.sum()) <= 0:
                    continue
                drawn = True
                half = width / 2
                ax.bar([xi - half / 2 for xi in x], total_in - cached, half * 0.95, color=colors[group])
                ax.bar(
                    [xi - half / 2 for xi in x],
                    cached,
                    half * 0.95,
                    bottom=total_in - cached,
                    color=colors[group],
                    alpha=0.4,
                )
                ax.bar(
                    [xi + half / 2 for xi in x],
                    out,
                    half * 0.95,
                    color=colors[group],
                    hatch="..",
                    edgecolor="white",
                )
            else:
                values = rows[column].fillna(0)
                if float(values.sum()) <= 0:
                    continue
                drawn = True
                ax.bar(x, values, width * 0.95, color=colors[group], label=group)
        if not drawn:
            ax.text(
                0.5,
                0.5,
                "not recorded\n(0 for every attempt)",
                ha="center",
                va="center",
                transform=ax.transAxes,
                color="#8A4B08",
                fontsize=9,
            )
            ax.set_yticks([])
        ax.set_xticks(range(len(arms)), arms, rotation=25, ha="right", fontsize=8)
        ax.set_title(head, fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", color="#EEEEEE")
        ax.set_axisbelow(True)
    from matplotlib.patches import Patch

    handles = [
        Patch(color="#777777", label="input, uncached"),
        Patch(color="#777777", alpha=0.4, label="input, cached"),
        Patch(facecolor="#777777", hatch="..", edgecolor="white", label="output"),
    ]
    if len(groups) > 1:
        handles += [Patch(color=colors[g], label=g) for g in groups]
    figure.legend(
        handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize=8, frameon=False
    )
    figure.suptitle(title, fontsize=12, weight="bold")
    return Plot(name, title, figure, caption)


#: The figures of a report, in order.
FIGURES: tuple[Callable[[Any], Plot], ...] = (
    paired_lift_by_problem,
    transfer_by_relative_standing,
    lift_by_family,
    model_by_direction,
    usage_by_arm,
)


def all_figures(report: Any) -> list[Plot]:
    return [make(report) for make in FIGURES]
