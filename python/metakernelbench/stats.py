"""The statistics of the benchmark (docs/statistics.md) as pandas DataFrames.

    import metakernelbench as mkb
    report = mkb.stats.compute(cells)          # cells: a DataFrame or a list of dicts
    report.aggregates                          # R@t and S, base / skill / lift, with splits
    report.lift                                # ΔGM, T, H with bootstrap CIs and tests
    report.standing                            # the relative-standing table (and its control)
    report.to_json()                           # stable keys, docs/statistics.md

Every number is computed in C++ (libmkb/stats); this module only shapes its input and output.
docs/statistics.md gives the formulas and the meaning of every column.

A cell-replicate is one (model, direction, problem, replicate) with its attempts' final scores,
either nested:

    {"model": "m", "direction": "cutedsl2tirx", "problem_slug": "p", "family": "moe",
     "replicate": 0,
     "source": {"passed": True, "speedup": 1.4},
     "base": {"passed": False},
     "skill": {"passed": True, "speedup": 2.0, "usage": {"cost_usd": 0.3}},
     "control": {"passed": True, "speedup": 0.9}}          # optional

or flat, one column per role and field (the form of a DataFrame): ``source_passed``,
``base_speedup``, ``skill_skipped``, ``skill_cost_usd``, ``control_resolved``, ... (fields:
arm, resolved, passed, speedup, skipped, state, the usage fields input_tokens,
cached_input_tokens, output_tokens, cost_usd, agent_seconds, and interrupted_tries with the
same usage fields prefixed ``interrupted_``). A role whose columns are all missing / NaN is
absent. An arm without ``resolved`` counts as resolved here (the C++ default is False) unless
its ``state`` says otherwise ("blocked", "failed", "pending", "running"); a speedup that is NaN
or missing makes a passed attempt count as failed. Nested arms may also carry
``kernel_samples_ms`` and ``eager_samples_ms`` (the final regrade's timing samples: measurement
noise, docs/statistics.md).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    import pandas as pd

_c = _core.stats

ROLES = ("source", "base", "skill", "control")
ARM_FIELDS = ("arm", "resolved", "passed", "speedup", "skipped", "state", "interrupted_tries")
USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "cost_usd", "agent_seconds")
#: States of an arm that is resolved (the C++ core's stats::IsResolvedState); any other state
#: given makes `resolved` default to False.
RESOLVED_STATES = tuple(_c.resolved_states())
CELL_FIELDS = ("model", "direction", "problem_slug", "family", "replicate")

# Sub-messages of report rows that become prefixed columns ("delta_gm_bca_low"), per row type.
_NESTED = {
    "LiftRow": {
        "delta_gm": "Estimate",
        "help_rate": "Estimate",
        "harm_rate": "Estimate",
        "wilcoxon": "WilcoxonResult",
        "sign": "SignTestResult",
        "mcnemar": "McNemarResult",
        "s_lift": "Estimate",
    },
}
_INT_FIELDS = {"input_tokens", "cached_input_tokens", "output_tokens", "replicate", "interrupted_tries"}
_BOOL_FIELDS = {"resolved", "passed", "skipped"}


def _pandas():
    """pandas, imported on first use: `import metakernelbench` (and every CLI call) stays fast."""
    import pandas

    return pandas


def _is_frame(value: Any) -> bool:
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas is imported
    return pandas is not None and isinstance(value, pandas.DataFrame)


# ------------------------------------------------------------------------------------------------
# Input


def _native(value: Any) -> Any:
    """A numpy / pandas scalar as the Python scalar the C++ converter accepts; NA as None."""
    if value is None:
        return None
    if type(value).__module__.startswith("pandas"):
        return None  # pd.NA, pd.NaT: missing
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, AttributeError):
            pass
    return value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _typed(field: str, value: Any) -> Any:
    """Undoes pandas' upcasts of columns with missing values (bool and int columns become float);
    anything else is passed on for the C++ converter to check."""
    if field in _BOOL_FIELDS and isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if field in _INT_FIELDS and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _arm(value: Any) -> Any:
    """A nested arm dict, cleaned: numpy scalars unboxed, None dropped, resolved defaulting to True."""
    if value is None or isinstance(value, _core.Message):
        return value
    if not isinstance(value, Mapping):
        return value  # the C++ converter names the field and the type it got
    out: dict[str, Any] = {}
    for key, raw in value.items():
        item = _native(raw)
        if key in ("usage", "interrupted_usage") and isinstance(item, Mapping):
            usage = {k: _typed(k, _native(v)) for k, v in item.items() if _native(v) is not None}
            out[key] = usage
        elif key in ("kernel_samples_ms", "eager_samples_ms") and item is not None:
            out[key] = [float(_native(x)) for x in item]
        elif item is not None:
            out[key] = _typed(key, item)
    _default_resolved(out)
    return out


def _default_resolved(arm: dict[str, Any]) -> None:
    """resolved defaults to True, unless a state that is not resolved is given."""
    state = arm.get("state")
    arm.setdefault("resolved", state is None or str(state).lower() in RESOLVED_STATES)


def _is_flat(row: Mapping[str, Any]) -> bool:
    return any(f"{role}_{field}" in row for role in ROLES for field in ARM_FIELDS + USAGE_FIELDS)


_INTERRUPTED = tuple(f"interrupted_{field}" for field in USAGE_FIELDS)


def _from_flat(row: Mapping[str, Any]) -> dict[str, Any]:
    cell: dict[str, Any] = {}
    for key in CELL_FIELDS:
        if key in row and not _missing(_native(row[key])):
            cell[key] = _typed(key, _native(row[key]))
    for role in ROLES:
        arm: dict[str, Any] = {}
        usage: dict[str, Any] = {}
        for field in ARM_FIELDS:
            value = _native(row.get(f"{role}_{field}"))
            if field == "speedup":
                if value is not None:
                    arm[field] = value  # NaN kept: a passed attempt without a speedup
            elif not _missing(value):
                arm[field] = _typed(field, value)
        for field in USAGE_FIELDS:
            value = _native(row.get(f"{role}_{field}"))
            if not _missing(value):
                usage[field] = _typed(field, value)
        interrupted: dict[str, Any] = {}
        for field, column in zip(USAGE_FIELDS, _INTERRUPTED, strict=True):
            value = _native(row.get(f"{role}_{column}"))
            if not _missing(value):
                interrupted[field] = _typed(field, value)
        present = any(k != "speedup" for k in arm) or usage or interrupted or not _missing(arm.get("speedup"))
        if not present:
            continue
        if usage:
            arm["usage"] = usage
        if interrupted:
            arm["interrupted_usage"] = interrupted
        _default_resolved(arm)
        cell[role] = arm
    return cell


def cells_from_frame(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Nested cell-replicate dicts from a DataFrame with flat columns (module docstring)."""
    return [_from_flat(row) for row in frame.to_dict("records")]


def normalize_cells(cells: pd.DataFrame | Iterable[Mapping[str, Any] | _core.Message]) -> list[Any]:
    """The cells as the C++ core takes them: nested dicts (or CellReplicate messages)."""
    if _is_frame(cells):
        return cells_from_frame(cells)
    if isinstance(cells, (str, bytes, Mapping)):
        raise _core.InvalidArgumentError("cells: expected a DataFrame or a list of cell-replicate dicts")
    out: list[Any] = []
    for cell in cells:
        if isinstance(cell, _core.Message) or not isinstance(cell, Mapping):
            out.append(cell)
        elif _is_flat(cell):
            out.append(_from_flat(cell))
        else:
            clean = {k: _native(v) for k, v in cell.items() if k not in ROLES and _native(v) is not None}
            clean = {k: _typed(k, v) for k, v in clean.items()}
            for role in ROLES:
                if cell.get(role) is not None:
                    clean[role] = _arm(cell[role])
            out.append(clean)
    return out


def validate_cells(cells: pd.DataFrame | Iterable[Mapping[str, Any]]) -> None:
    """Raises InvalidArgumentError naming the first invalid field ('cells[3].base.speedup: ...')."""
    _c.validate_cells(normalize_cells(cells))


# ------------------------------------------------------------------------------------------------
# Output


def _flatten(row: Mapping[str, Any], type_name: str, thresholds: Sequence[float] = ()) -> dict[str, Any]:
    nested = _NESTED.get(type_name, {})
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == "r_at_lift":  # one Estimate per threshold: "R@1_lift", "R@1_lift_bca_low", ...
            empty = _core.message("Estimate").to_dict()
            estimates = list(value or [])
            for i, t in enumerate(thresholds):
                sub = estimates[i] if i < len(estimates) else {k: None for k in empty}
                for sub_key, sub_value in sub.items():
                    name = f"{_threshold_name(t)}_lift"
                    out[name if sub_key == "value" else f"{name}_{sub_key}"] = sub_value
        elif key in nested:
            sub = value if value is not None else _core.message(nested[key]).to_dict()
            for sub_key, sub_value in sub.items():
                out[key if sub_key == "value" else f"{key}_{sub_key}"] = sub_value
        else:
            out[key] = value
    return out


def _threshold_name(t: float) -> str:
    return f"R@{t:g}"


class StatsReport:
    """A computed report: DataFrames over the StatsReport message (read-only).

    Tables: aggregates, usage, comparisons, tiers, lift, problems, standing. Group keys that a
    table does not split on read "*"; undefined numbers are NaN.
    """

    def __init__(self, message: _core.Message):
        self._message = message
        self._dict = message.to_dict()

    @property
    def message(self) -> _core.Message:
        """The mkb.v1.StatsReport message."""
        return self._message

    @property
    def config(self) -> dict[str, Any]:
        """The constants used: clip_low, clip_high, failure_floor, thresholds, bootstrap_resamples,
        seed, confidence, and tau with its source and pair counts."""
        out = dict(self._dict["config"])
        out["confidence"] = self._dict["confidence"]
        tau = self._dict["tau"] or {}
        out["tau"] = tau.get("tau")
        out["tau_source"] = tau.get("source")
        out["tau_pairs"] = tau.get("pairs")
        out["tau_min_pairs"] = tau.get("min_pairs")
        return out

    @property
    def thresholds(self) -> list[float]:
        return list(self._dict["config"]["thresholds"])

    @property
    def levels(self) -> list[str]:
        return list(self._dict["levels"])

    @property
    def counts(self) -> dict[str, int]:
        """n_cells, n_resolved, n_with_control."""
        return {k: self._dict[k] for k in ("n_cells", "n_resolved", "n_with_control")}

    def _frame(self, key: str, type_name: str, rows: list[dict[str, Any]] | None = None) -> pd.DataFrame:
        rows = self._dict[key] if rows is None else rows
        t = self.thresholds
        columns = list(_flatten(_core.message(type_name).to_dict(), type_name, t).keys())
        return _pandas().DataFrame([_flatten(r, type_name, t) for r in rows], columns=columns)

    @property
    def measurement_noise(self) -> dict[str, Any]:
        """Whether the intervals carry the judge's timing noise: included, passed_attempts,
        with_samples, timing_resamples, and a note saying what does and does not."""
        return dict(self._dict["measurement_noise"])

    @cached_property
    def aggregates(self) -> pd.DataFrame:
        """The harness aggregates: model, split, group, arm, n, R@<t> per threshold, S, and the
        group's n_cell_replicates, source_coverage and skill_coverage. Splits: all,
        with_skill, by_source_verdict, by_direction, by_family and by_cell ("<problem>/<direction>")."""
        names = [_threshold_name(t) for t in self.thresholds]
        extra = ["n_cell_replicates", "source_coverage", "skill_coverage"]
        rows = []
        for row in self._dict["aggregates"]:
            out = {k: row[k] for k in ("model", "split", "group", "arm", "n")}
            out.update(zip(names, row["r_at"], strict=True))
            out["S"] = row["s"]
            out.update({k: row[k] for k in extra})
            rows.append(out)
        columns = ["model", "split", "group", "arm", "n", *names, "S", *extra]
        return _pandas().DataFrame(rows, columns=columns)

    @cached_property
    def usage(self) -> pd.DataFrame:
        """Tokens, cost and agent seconds per (model, arm), each attempt counted once."""
        return self._frame("usage", "UsageRow")

    @cached_property
    def comparisons(self) -> pd.DataFrame:
        """One row per resolved cell-replicate: outcomes, q, d, tiers, standing, help / harm."""
        return self._frame("comparisons", "ComparisonRow")

    @cached_property
    def tiers(self) -> pd.DataFrame:
        """Tier distributions: model, role, n, tier_0 .. tier_<len(thresholds)>."""
        k = len(self.thresholds)
        names = [f"tier_{i}" for i in range(k + 1)]
        rows = []
        for row in self._dict["tiers"]:
            out = {"model": row["model"], "role": row["role"], "n": row["n"]}
            out.update(zip(names, row["counts"], strict=True))
            rows.append(out)
        return _pandas().DataFrame(rows, columns=["model", "role", "n", *names])

    @cached_property
    def lift(self) -> pd.DataFrame:
        """Paired lift per level, group and arm: ΔGM, T, H with percentile and BCa intervals, the
        Wilcoxon, sign and McNemar tests with adjusted p-values, and the R@t and S lifts with
        their intervals (columns "R@1_lift", "R@1_lift_bca_low", ..., "s_lift", ...)."""
        return self._frame("lift", "LiftRow")

    @cached_property
    def problems(self) -> pd.DataFrame:
        """Per-problem mean d within each lift group (the unit of the tests)."""
        return self._frame("problems", "ProblemLiftRow")

    @cached_property
    def standing(self) -> pd.DataFrame:
        """The relative-standing table (arm "skill") and its regression-to-the-mean control
        (arm "control")."""
        return self._frame("standing", "StandingRow")

    def tables(self) -> dict[str, pd.DataFrame]:
        names = ("aggregates", "usage", "comparisons", "tiers", "lift", "problems", "standing")
        return {name: getattr(self, name) for name in names}

    def to_json(self, indent: int = 2) -> str:
        """JSON with the stable keys of docs/statistics.md (NaN as null)."""
        return _c.report_json(self._message, indent)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as Python objects (NaN as None)."""
        return json.loads(self.to_json(0))

    def __repr__(self) -> str:
        c = self.counts
        return (
            f"<StatsReport cells={c['n_cells']} resolved={c['n_resolved']} "
            f"tau={self.config['tau']:.4g} ({self.config['tau_source']}) levels={self.levels}>"
        )


def _config(config: Mapping[str, Any] | _core.Message | None) -> Any:
    if config is None or isinstance(config, _core.Message):
        return config
    return {k: _native(v) for k, v in dict(config).items()}


def compute(
    cells: pd.DataFrame | Iterable[Mapping[str, Any]],
    config: Mapping[str, Any] | _core.Message | None = None,
    *,
    levels: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> StatsReport:
    """Computes every statistic of docs/statistics.md.

    config: StatsConfig fields (clip_low, clip_high, failure_floor, tau, bootstrap_resamples, seed,
    thresholds); omitted or zero ones take the paper's values. levels: grouping levels of the
    lift and standing tables, e.g. ["overall", "model,direction", "family"] (default: overall,
    model, direction, model,direction, family). Deterministic for a given seed.
    """
    options: dict[str, Any] = {"confidence": float(confidence)}
    if levels is not None:
        if isinstance(levels, str):
            levels = [levels]
        options["levels"] = list(levels)
    message = _c.compute_report(normalize_cells(cells), _config(config), options)
    return StatsReport(message)


def aggregates(cells, config=None) -> pd.DataFrame:
    """The published harness's aggregates (R@t, S; base, skill, lift; splits). No bootstrap is run
    when only these are wanted: the resamples are set to 1."""
    cfg = config.to_dict() if isinstance(config, _core.Message) else dict(_config(config) or {})
    cfg["bootstrap_resamples"] = 1
    return compute(cells, cfg, levels=["overall"]).aggregates


def paired_lift(cells, config=None, *, levels=None, confidence: float = 0.95) -> pd.DataFrame:
    """The paired lift table (StatsReport.lift)."""
    return compute(cells, config, levels=levels, confidence=confidence).lift


def relative_standing(cells, config=None, *, levels=None, confidence: float = 0.95) -> pd.DataFrame:
    """The relative-standing table with its control (StatsReport.standing)."""
    return compute(cells, config, levels=levels, confidence=confidence).standing


# ------------------------------------------------------------------------------------------------
# The building blocks, for analyses of one's own (and the cross-checks against scipy)


def wilcoxon_signed_rank(
    d: Sequence[float], method: str = "auto", correction: bool = False
) -> dict[str, Any]:
    """Two-sided Wilcoxon signed-rank test, Pratt zeros; as scipy.stats.wilcoxon(zero_method="pratt").
    method: "auto", "exact" or "asymptotic". Returns n, n_zero, w_plus, w_minus, statistic, z,
    p_value, method."""
    return _c.wilcoxon_signed_rank([float(x) for x in d], method, correction)


def sign_test(d: Sequence[float]) -> dict[str, Any]:
    """Two-sided exact sign test (zeros dropped): n_positive, n_negative, n_zero, p_value."""
    return _c.sign_test([float(x) for x in d])


def mcnemar_exact(both_passed: int, base_only: int, skill_only: int, both_failed: int) -> dict[str, Any]:
    """Exact McNemar test on a paired pass / fail table."""
    return _c.mcnemar_exact(int(both_passed), int(base_only), int(skill_only), int(both_failed))


def holm(p: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (NaN entries left out)."""
    return _c.holm_adjust([float(x) for x in p])


def benjamini_hochberg(p: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg-adjusted p-values (NaN entries left out)."""
    return _c.bh_adjust([float(x) for x in p])


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """(rate, low, high) of k successes in n trials."""
    return _c.wilson_interval(int(k), int(n), float(confidence))


def bootstrap_paired_lift(
    sum_d: Sequence[float],
    n: Sequence[int],
    n_help: Sequence[int],
    n_harm: Sequence[int],
    *,
    resamples: int = 10000,
    seed: int = 20260101,
    confidence: float = 0.95,
    keep_distributions: bool = False,
) -> dict[str, Any]:
    """Cluster bootstrap of delta_gm, help_rate and harm_rate from per-problem totals."""
    return _c.bootstrap_paired_lift(
        [float(x) for x in sum_d],
        [float(x) for x in n],
        [float(x) for x in n_help],
        [float(x) for x in n_harm],
        int(resamples),
        int(seed),
        float(confidence),
        bool(keep_distributions),
    )


__all__ = [
    "StatsReport",
    "aggregates",
    "benjamini_hochberg",
    "bootstrap_paired_lift",
    "cells_from_frame",
    "compute",
    "holm",
    "mcnemar_exact",
    "normalize_cells",
    "paired_lift",
    "relative_standing",
    "sign_test",
    "validate_cells",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
