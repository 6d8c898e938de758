"""The statistics of a store: which experiments, which cells, one StatsReport."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core

#: The lift / standing levels every report and figure needs; --by adds to them.
REPORT_LEVELS = ("overall", "model", "direction", "model,direction", "family")


@dataclass
class StoreStats:
    """A StatsReport over some experiments of a store, with where it came from."""

    report: Any  # metakernelbench.stats.StatsReport
    store: Path | None
    experiments: list[str]
    models: list[str]
    cells: int
    notes: list[str] = field(default_factory=list)


def normalize_levels(by: Iterable[str] | None, *, base: Sequence[str] = ("overall",)) -> list[str] | None:
    """Levels from --by values ("model,direction", "family", ... as given), after `base`, without
    repeats; None when `by` is empty (the statistics' default levels)."""
    wanted = [v.strip().replace(" ", "") for v in by or [] if v.strip()]
    if not wanted:
        return None
    out: list[str] = []
    for level in [*base, *wanted]:
        key = ",".join(sorted(level.split(","), key=_level_order)) if level != "overall" else level
        if key not in out:
            out.append(key)
    return out


def _level_order(key: str) -> int:
    return {"model": 0, "direction": 1, "family": 2}.get(key, 3)


def _compute(cells: list[Any], config: Any, levels: list[str] | None, confidence: float) -> Any:
    from .. import stats

    try:
        return stats.compute(cells, config, levels=levels, confidence=confidence)
    except _core.InvalidArgumentError as error:
        text = str(error)
        if text.startswith("options.levels"):
            raise _core.InvalidArgumentError("--by: " + text.split(": ", 1)[1]) from None
        raise


def store_stats(
    store: Any,
    experiments: Sequence[str] | None = None,
    *,
    levels: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
) -> StoreStats:
    """The statistics of `experiments` of `store` (a Store or a path; default: every experiment
    in it), pooled into one report: each experiment's cells carry their model, so a store with one
    experiment per model gives the model x direction tables. Experiments that share a design
    (the same spec but for the name and the scheduling: replicates run by several processes
    under their own names, or merged from several stores) are pooled as further replicates;
    two experiments of different designs that hold the same (model, direction, problem,
    replicate) cannot be pooled: choose with `experiments`."""
    from ..store import Store

    if isinstance(store, Store):
        s = store
    else:
        path = Path(store)
        if not path.exists():
            raise _core.NotFoundError(f"{path}: no such store")
        s = Store(path, read_only=True)
    names = list(experiments) if experiments else s.experiment_names()
    known = set(s.experiment_names())
    for name in names:
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise _core.NotFoundError(
                f"--experiment: no experiment '{name}' in {s.path} (experiments: {listed})"
            )
    if not names:
        raise _core.FailedPreconditionError(f"{s.path}: the store holds no experiment yet")
    # Experiments that share a design (replicates run as separate experiments, or merged from
    # several stores) are pooled as further replicates; others must not collide (C++ pooling).
    cells, pooled = s.pooled_cells(names)
    notes: list[str] = list(pooled)
    models: list[str] = []
    for name in names:
        if not any(True for _ in s.cells(name)):
            notes.append(f"experiment '{name}' has no cell (no conditioned arm with a trial yet)")
    for cell in cells:
        if cell.model not in models:
            models.append(cell.model)
    report = _compute(cells, config, list(levels) if levels else None, confidence)
    return StoreStats(report, s.path, names, sorted(models), len(cells), notes)


def cells_stats(
    cells: Any,
    *,
    levels: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
) -> StoreStats:
    """The same from cells (a DataFrame or cell-replicate dicts) without a store."""
    report = _compute(cells, config, list(levels) if levels else None, confidence)
    models = sorted(set(report.comparisons["model"])) if len(report.comparisons) else []
    return StoreStats(report, None, [], models, report.counts["n_cells"])


def submission_effort(store: Any, experiment: str) -> Any:
    """Per arm of an experiment, over its trials' current tries that ran: attempts, counted
    submissions (total and per attempt) and how many attempts passed on their first counted
    submission. What a skill changes before any speedup does: the demo's script is built to show
    it (its solos submit a wrong kernel first; given the skill, the conditioned arm does not).
    Columns: arm, conditioned (a skill arm), attempts, counted_submissions,
    counted_per_attempt, first_try_passes."""
    import pandas

    from ..store import Store

    s = store if isinstance(store, Store) else Store(store, read_only=True)
    trials = s.trials(experiment)
    spec = s.experiment(experiment)
    conditioned = {a.name for a in spec.arms if str(a.skill.kind or "").lower() not in ("", "none")}
    submissions = s.submissions(experiment)
    submissions = submissions[submissions["current"] & submissions["counted"]].sort_values(
        ["trial_id", "index"]
    )
    first = submissions.groupby("trial_id")["passed"].first()
    counted = submissions.groupby("trial_id").size()
    rows = []
    ran = trials[trials["state"].isin(["finished", "failed"])]
    for arm in dict.fromkeys(a.name for a in spec.arms):
        mine = ran[ran["arm"] == arm]["trial_id"]
        if mine.empty:
            continue
        total = int(counted.reindex(mine).fillna(0).sum())
        rows.append(
            {
                "arm": arm,
                "conditioned": arm in conditioned,
                "attempts": len(mine),
                "counted_submissions": total,
                "counted_per_attempt": total / len(mine),
                "first_try_passes": int(first.reindex(mine).fillna(False).astype(bool).sum()),
            }
        )
    columns = [
        "arm",
        "conditioned",
        "attempts",
        "counted_submissions",
        "counted_per_attempt",
        "first_try_passes",
    ]
    return pandas.DataFrame(rows, columns=columns)
