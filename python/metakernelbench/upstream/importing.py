"""Importing a model's results tree into a store, through the protocol with a replaying executor."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core
from .replay import (
    Replay,
)
from .tree import (
    EXPERIMENT_PREFIX,
    ModelResults,
    _bad,
    model_trees,
    read_model_results,
)

# ------------------------------------------------------------------------------------------------
# The import


@dataclass
class ImportResult:
    """What one model's import found and stored."""

    experiment: str
    model: str
    root: Path
    problems: int
    replicates: int
    counts: dict[str, int]  # trial folders by record: finished, skipped, error, no_record
    skipped_problems: list[str]  # problems of the tree not in the suite (with skip_missing_problems)
    stored: dict[str, Any]  # the protocol's totals (planned, reused, finished, skipped, failed, blocked, ...)
    warnings: list[str]
    retired: list[str] = field(default_factory=list)  # trials of an earlier import the tree no longer has


def _match_suite(
    results: ModelResults, suite: Any, skip_missing: bool
) -> tuple[list[str], list[str], list[str]]:
    """(our problem slugs, the tree's problems missing from the suite, warnings), by number."""
    by_number = {p.number: p for p in suite}
    slugs: list[str] = []
    missing: list[str] = []
    warnings: list[str] = []
    for number, name in sorted(results.problems.items()):
        problem = by_number.get(number)
        if problem is None:
            missing.append(name)
            continue
        upstream_slug = name.split("_", 1)[1]
        if upstream_slug != problem.slug:
            warnings.append(
                f"problem {number:02d}: '{name}' upstream, '{problem.slug}' in the suite; matched by number"
            )
        category = results.categories.get(name)
        if category is not None and category != problem.family:
            raise _bad(
                results.root / "results.json",
                "cells",
                f"problem {name} is in category '{category}' upstream but '{problem.family}' in the suite "
                f"({problem.directory}): not the same problem",
            )
        slugs.append(problem.slug)
    if missing and not skip_missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise _core.FailedPreconditionError(
            f"{results.root / 'problems'}: {len(missing)} problems are not in the suite at {suite.root}: "
            f"{shown}. Point --suite at a suite that has them, or pass --skip-missing-problems"
        )
    return slugs, missing, warnings


def experiment_for(results: ModelResults, slugs: list[str], name: str | None = None) -> dict[str, Any]:
    """The ExperimentSpec of an import: the four standard arms on the tree's problems and
    replicates, the paper's device (cuda) and workload (full)."""
    from ..experiments import Experiment

    exp = Experiment.standard(
        name or EXPERIMENT_PREFIX + results.root.name,
        results.model,
        problems=slugs,
        replicates=results.replicates,
        concurrency=4,
        max_tries=1,
        workload="full",
        device="cuda",
    )
    return exp.to_spec()


@dataclass
class PreparedImport:
    """One model tree, read, checked and matched to the suite: everything an import needs, before
    the store is touched."""

    results: ModelResults
    slugs: list[str]
    missing: list[str]
    warnings: list[str]
    replay: Replay
    spec: dict[str, Any]
    suite: Any


def prepare_model_import(
    path: str | os.PathLike,
    *,
    suite: Any = None,
    experiment: str | None = None,
    skip_missing_problems: bool = False,
) -> PreparedImport:
    """Reads and checks one model's results tree and matches it to the suite, raising on anything
    malformed (naming the file and the field). Touches no store."""
    from ..suite import Suite, load_suite

    results = read_model_results(path)
    if suite is None or isinstance(suite, (str, os.PathLike)):
        suite = load_suite(suite)
    elif not isinstance(suite, Suite):
        raise _core.InvalidArgumentError("suite: expected a Suite or a folder")
    slugs, missing, warnings = _match_suite(results, suite, skip_missing_problems)
    if not slugs:
        raise _core.FailedPreconditionError(
            f"{results.root}: none of its problems is in the suite at {suite.root}"
        )
    replay = Replay(results)
    spec = experiment_for(results, slugs, experiment)
    return PreparedImport(results, slugs, missing, warnings, replay, spec, suite)


def store_model_import(
    prepared: PreparedImport, store: Any, *, progress: Callable[[dict[str, Any]], None] | None = None
) -> ImportResult:
    """Stores a prepared model tree as one experiment (see import_model_results)."""
    from .. import experiments
    from ..store import Store

    target = store if isinstance(store, Store) else Store(store)
    results = prepared.results
    run = experiments.run(
        prepared.spec,
        target,
        executor=prepared.replay,
        suite=prepared.suite,
        rerun_stale=True,
        progress=progress,
        retry_delay_s=0.0,
        fingerprint_salt=prepared.replay.fingerprint_salt,
    )
    return ImportResult(
        experiment=prepared.spec["name"],
        model=results.model,
        root=results.root,
        problems=len(prepared.slugs),
        replicates=results.replicates,
        counts=results.counts(),
        skipped_problems=prepared.missing,
        stored=dict(run.progress),
        warnings=results.warnings + prepared.warnings + list(run.warnings),
        retired=list(run.retired),
    )


def import_model_results(
    path: str | os.PathLike,
    store: Any,
    *,
    suite: Any = None,
    experiment: str | None = None,
    skip_missing_problems: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> ImportResult:
    """Imports one model's results tree into `store` (a Store or a path) as one experiment
    (default name: 'upstream-<folder name>'). Importing the same tree again changes nothing;
    a changed tree (any record.json) replaces the experiment's trials, archiving the earlier
    tries; trials the newer tree no longer has (problems, replicates) are retired: archived and
    left out of the statistics, whose cells are the newer tree's."""
    prepared = prepare_model_import(
        path, suite=suite, experiment=experiment, skip_missing_problems=skip_missing_problems
    )
    return store_model_import(prepared, store, progress=progress)


def import_results(
    path: str | os.PathLike,
    store: Any,
    *,
    suite: Any = None,
    experiment: str | None = None,
    skip_missing_problems: bool = False,
) -> list[ImportResult]:
    """Imports every model tree at `path` (the harness's `results/`, or one `results/<model>/`)
    into `store`. `experiment` names the experiment when there is one model tree. All or nothing:
    every tree is read and checked before the store is touched, so a malformed one stops the
    import, naming its file, with nothing stored."""
    trees = model_trees(path)
    if experiment is not None and len(trees) > 1:
        raise _core.InvalidArgumentError(
            f"experiment: one name for {len(trees)} model trees; import them one by one to name each"
        )
    if suite is None or isinstance(suite, (str, os.PathLike)):
        from ..suite import load_suite

        suite = load_suite(suite)
    prepared = [
        prepare_model_import(
            tree, suite=suite, experiment=experiment, skip_missing_problems=skip_missing_problems
        )
        for tree in trees
    ]
    names = [p.spec["name"] for p in prepared]
    for name in names:
        if names.count(name) > 1:
            clashing = [str(p.results.root) for p in prepared if p.spec["name"] == name]
            raise _core.InvalidArgumentError(
                f"{path}: model trees {', '.join(clashing)} would both be experiment '{name}'"
            )
    return [store_model_import(p, store) for p in prepared]
