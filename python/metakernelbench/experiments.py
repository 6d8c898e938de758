"""Define and run experiments of the transfer protocol (docs/protocol.md) from Python.

    import metakernelbench as mkb

    exp = mkb.Experiment("placebo", model="scripted/demo", problems=["02", "25", "28"],
                         replicates=1, workload="small", device="cpu")
    exp.add_arm("solo_tirx", "tirx")                                   # a solo
    exp.add_arm("solo_cutedsl", "cutedsl")
    exp.add_arm("cutedsl2tirx_skill", "tirx", skill=mkb.skill_from_arm("solo_cutedsl"),
                base="solo_tirx")                                      # cross-DSL skill
    exp.add_arm("tirx_placebo", "tirx", skill=mkb.fixed_skill(text, origin="placebo"),
                base="solo_tirx")                                      # placebo / human text
    exp.add_arm("tirx_same_dsl", "tirx", skill=mkb.skill_from_arm("solo_tirx"), base="solo_tirx")
    exp.add_arm("gpt_skill_tirx", "tirx", skill=mkb.skill_from_arm("solo_cutedsl", model="openai/gpt-5"),
                base="solo_tirx")                                      # another model's skill
    exp.add_arm("solo_tirx_control", "tirx", base="solo_tirx")          # a second solo (control)

    exp.plan("results.db")                       # the dry run, a DataFrame
    result = exp.run("results.db", executor=...) # blocks; stores everything as it happens
    result.trials                                # DataFrame of the experiment's trials
    result.stats()                               # mkb.stats on the store's cells

Experiment.standard(...) gives the four standard arms (optionally with the two controls).

Executors: a Python callable `executor(spec) -> attempt` (spec: a TrialSpec message; attempt:
an Attempt dict or message; raise mkb.UnavailableError for a transient failure), a C++
executor (metakernelbench._core.protocol.TrialExecutor), or None: the agent's executor for the
experiment's model (agent_executor()). Scheduling, ordering, retries, stale detection and
resume are C++ (libmkb/protocol); docs/protocol.md describes them.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from .store import Store

if TYPE_CHECKING:
    import pandas as pd

DSLS = ("cutedsl", "tirx")
STANDARD_ARMS = tuple(arm.to_dict()["name"] for arm in _core.standard_arms())
CONTROL_ARMS = tuple(arm.to_dict()["name"] for arm in _core.control_arms())


# ------------------------------------------------------------------------------------------------
# Skill sources (SkillSource of experiment.proto)


def no_skill() -> dict[str, Any]:
    """A solo: no skill."""
    return {"kind": "none"}


def skill_from_arm(arm: str, *, model: str | None = None) -> dict[str, Any]:
    """The SKILL.md left by `arm`'s attempt at the same problem and replicate; with `model`,
    by that model's attempt (found in the store: run that model's experiment first)."""
    source: dict[str, Any] = {"kind": "arm", "arm": arm}
    if model:
        source["model"] = model
    return source


def fixed_skill(text: str, *, origin: str = "placebo") -> dict[str, Any]:
    """A fixed text handed to every trial of the arm: origin "placebo" or "human"."""
    return {"kind": "fixed_text", "text": text, "origin": origin}


@dataclass
class Arm:
    """An arm: trials in `dsl` conditioned on `skill` (a skill source dict; None: a solo),
    compared with `base` (a solo arm; required for conditioned arms, optional for a second solo
    used as control)."""

    name: str
    dsl: str
    skill: dict[str, Any] | None = None
    base: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.dsl not in DSLS:
            raise _core.InvalidArgumentError(
                f"arm '{self.name}': dsl '{self.dsl}' is not one of cutedsl, tirx"
            )
        out: dict[str, Any] = {"name": self.name, "dsl": self.dsl, "skill": self.skill or no_skill()}
        if self.base:
            out["base_arm"] = self.base
        return out


def _arm_of(spec: Any) -> Arm:
    """An Arm from a C++ mkb.v1.ArmSpec (libmkb/model/defaults.h)."""
    d = spec.to_dict()
    skill = d.get("skill") or {}
    source = (
        skill_from_arm(skill["arm"], model=skill.get("model") or None) if skill.get("kind") == "arm" else None
    )
    return Arm(d["name"], d["dsl"], source, d.get("base_arm") or None)


def standard_arms(*, control: bool = False) -> list[Arm]:
    """solo_cutedsl, solo_tirx, cutedsl2tirx_skill, tirx2cutedsl_skill (README.md); with
    control=True also solo_tirx_control and solo_cutedsl_control (second solos: the
    regression-to-the-mean control, docs/statistics.md). Defined in C++ (StandardArms,
    ControlArms)."""
    specs = list(_core.standard_arms()) + (list(_core.control_arms()) if control else [])
    return [_arm_of(spec) for spec in specs]


# ------------------------------------------------------------------------------------------------
# Experiments


@dataclass
class Experiment:
    """An experiment: a model, problems (slugs, numbers or globs; empty: all), arms,
    replicates and the per-attempt budget. Trials are (problem, arm, replicate)."""

    name: str
    model: str
    problems: list[str] = field(default_factory=list)
    arms: list[Arm] = field(default_factory=list)
    replicates: int = 3
    concurrency: int = 4
    max_tries: int = 4
    workload: str = "full"
    device: str = "auto"
    budget: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def standard(cls, name: str, model: str, *, control: bool = False, **fields: Any) -> Experiment:
        """The published design: the four standard arms (and the controls with control=True)."""
        return cls(name, model, arms=standard_arms(control=control), **fields)

    def add_arm(
        self, name: str, dsl: str, *, skill: dict[str, Any] | None = None, base: str | None = None
    ) -> Experiment:
        self.arms.append(Arm(name, dsl, skill, base))
        return self

    def to_spec(self) -> dict[str, Any]:
        """The ExperimentSpec as a dict (validated by the C++ core when used)."""
        if self.device not in ("auto", "cpu", "cuda"):
            raise _core.InvalidArgumentError(f"device: '{self.device}' is not one of auto, cpu, cuda")
        spec: dict[str, Any] = {
            "name": self.name,
            "model": self.model,
            "problems": [str(p) for p in self.problems],
            "arms": [arm.to_dict() for arm in self.arms],
            "replicates": self.replicates,
            "concurrency": self.concurrency,
            "max_tries": self.max_tries,
            "workload": self.workload,
            "budget": dict(self.budget),
        }
        if self.device != "auto":
            spec["device"] = self.device
        return spec

    def plan(
        self,
        store: Store | str | os.PathLike | None = None,
        *,
        suite: Any = None,
        rerun_stale: bool = False,
        executor: Any = None,
        fingerprint_salt: str | None = None,
    ) -> pd.DataFrame:
        """The dry run (see plan())."""
        return plan(
            self,
            store,
            suite=suite,
            rerun_stale=rerun_stale,
            executor=executor,
            fingerprint_salt=fingerprint_salt,
        )

    def run(self, store: Store | str | os.PathLike, *, executor: Any = None, **options: Any) -> RunResult:
        """Runs the experiment into `store` (see run())."""
        return run(self, store, executor=executor, **options)


def _spec(experiment: Experiment | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(experiment, Experiment):
        spec = experiment.to_spec()
    elif isinstance(experiment, Mapping):
        spec = copy.deepcopy(dict(experiment))
    else:
        raise _core.InvalidArgumentError("experiment: expected an Experiment or an ExperimentSpec dict")
    if spec.get("device") in ("auto", "", None):
        spec["device"] = resolve_device("auto")
    return spec


def resolve_device(device: str) -> str:
    """'auto' becomes 'cuda' when torch sees a GPU, else 'cpu' (so that a store records which
    device its results come from: the device is part of every task fingerprint)."""
    if device != "auto":
        return device
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def _suite(suite: Any) -> Any:
    from .suite import Suite, load_suite

    if suite is None:
        suite = load_suite()
    elif isinstance(suite, (str, os.PathLike)):
        suite = load_suite(suite)
    if isinstance(suite, Suite):
        return suite._core  # noqa: SLF001 - the C++ suite the protocol reads
    return suite


def _store(store: Store | str | os.PathLike | None, create: bool = True) -> Store | None:
    if store is None or isinstance(store, Store):
        return store
    return Store(store, create=create)


def plan(
    experiment: Experiment | Mapping[str, Any],
    store: Store | str | os.PathLike | None = None,
    *,
    suite: Any = None,
    rerun_stale: bool = False,
    executor: Any = None,
    fingerprint_salt: str | None = None,
) -> pd.DataFrame:
    """The dry run: one row per trial, in start order (solos first), with what run() with the
    same executor would do given the store (action: run, reuse, rerun_failed,
    rerun_interrupted, stale, rerun_stale, check_skill, blocked), why, and what the trial waits
    for (depends_on). The executor matters only through its fingerprint salt (None: the
    agent's). frame.attrs["outside_plan"] lists the experiment's stored trials that the plan no
    longer holds (a run retires them). Reads the store only; a store that does not exist is not
    created."""
    import pandas

    if store is None or isinstance(store, Store):
        s = store
    else:
        s = Store(store, read_only=True) if Path(store).exists() else None
    result = _core.protocol.plan(
        _spec(experiment),
        _suite(suite),
        s.core if s else None,
        rerun_stale,
        _salt(executor, fingerprint_salt),
    )
    columns = [
        "trial_id",
        "problem_number",
        "problem_slug",
        "family",
        "arm",
        "dsl",
        "replicate",
        "skill_source",
        "depends_on",
        "action",
        "reason",
        "stored_state",
        "stored_try",
        "task_fingerprint",
    ]
    frame = pandas.DataFrame(result["entries"], columns=columns)
    frame.attrs["outside_plan"] = list(result["outside_plan"])
    return frame


@dataclass
class RunResult:
    """What a run did (progress totals), what is left (failed, blocked), the trials it retired
    (stored trials outside its plan: their tries archived, out of the statistics), and the store."""

    experiment: str
    store: Store
    progress: dict[str, Any]
    failed: list[str]
    blocked: list[str]
    stale_kept: list[str]
    warnings: list[str]
    complete: bool
    retired: list[str] = field(default_factory=list)

    @property
    def trials(self) -> pd.DataFrame:
        return self.store.trials(self.experiment)

    def stats(self, config: Any = None, **options: Any) -> Any:
        return self.store.stats(self.experiment, config, **options)


def agent_executor(
    model: str,
    *,
    suite: Any = None,
    workspace_root: str | os.PathLike | None = None,
    device: str = "auto",
    **options: Any,
) -> Any:
    """The agent's executor (libmkb/agent, AgentTrialExecutor) for `model` (e.g. "scripted/demo",
    "anthropic/...", "openai/..."): each trial is a sandboxed agent attempt judged by the judge,
    in a workspace under `workspace_root` (default: $MKB_WORKSPACES, else
    ~/.cache/metakernelbench/workspaces). `options` go to metakernelbench.agent's executor
    (evaluation_slots, judge_config, model_options, ...)."""
    from . import agent
    from .suite import Suite, load_suite

    if suite is None or isinstance(suite, (str, os.PathLike)):
        suite = load_suite(suite)
    root = suite.root if isinstance(suite, Suite) else suite.root
    if workspace_root is None:
        workspace_root = os.environ.get("MKB_WORKSPACES") or (
            Path.home() / ".cache" / "metakernelbench" / "workspaces"
        )
    Path(workspace_root).mkdir(parents=True, exist_ok=True)
    executor = agent.AgentTrialExecutor(workspace_root, suite_root=str(root), device=device, **options)
    if not hasattr(executor, "fingerprint_salt"):
        executor.fingerprint_salt = agent_fingerprint_salt()
    return executor


def agent_fingerprint_salt() -> str:
    """The agent's part of every task fingerprint (C++ mkb::AgentFingerprintSalt: a digest of
    what it tells every model besides the task), so that trials run before a change to it are
    stale. "" when this build has no agent."""
    from . import _core

    salt = getattr(_core, "agent_fingerprint_salt", None)
    return salt() if salt is not None else ""


def _salt(executor: Any, fingerprint_salt: str | None) -> str:
    """The salt of a run or plan: as given, else the executor's `fingerprint_salt` attribute
    ("" without one), else (executor=None: the agent) the agent's."""
    if fingerprint_salt is not None:
        return fingerprint_salt
    if executor is None:
        return agent_fingerprint_salt()
    return str(getattr(executor, "fingerprint_salt", ""))


def _core_executor(executor: Any) -> Any:
    """A Python wrapper of a C++ executor (an object whose .core is one) as that executor."""
    core = getattr(executor, "core", None)
    if core is not None and isinstance(core, _core.protocol.TrialExecutor):
        return core
    return executor


def run(
    experiment: Experiment | Mapping[str, Any],
    store: Store | str | os.PathLike,
    *,
    executor: Any = None,
    suite: Any = None,
    rerun_stale: bool = False,
    progress: Callable[[dict[str, Any]], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    retry_delay_s: float = 5.0,
    fingerprint_salt: str | None = None,
) -> RunResult:
    """Runs the experiment into `store`, resuming what the store holds: resolved trials are
    reused, failed and interrupted ones rerun; stale ones (task or skill changed) make the run
    raise FailedPreconditionError unless rerun_stale=True. Blocks until every runnable trial
    has ended (the GIL is released: `progress(event)` is called for each event, from the
    run's threads). Ctrl-C (or cancel() returning True) starts nothing new, waits for the
    running trials and raises; a later run resumes."""
    spec = _spec(experiment)
    s = _store(store)
    assert s is not None
    core_suite = _suite(suite)
    if executor is None:
        executor = agent_executor(
            spec["model"],
            suite=suite,
            device=spec.get("device", "auto"),
            workspace_root=Path(s.path).with_suffix("").as_posix() + "-workspaces",
            store_path=s.path,
        )
    fingerprint_salt = _salt(executor, fingerprint_salt)
    executor = _core_executor(executor)
    summary = _core.protocol.run(
        spec, core_suite, s.core, executor, rerun_stale, fingerprint_salt, retry_delay_s, progress, cancel
    )
    return RunResult(
        experiment=spec["name"],
        store=s,
        progress=summary["progress"],
        failed=list(summary["failed"]),
        blocked=list(summary["blocked"]),
        stale_kept=list(summary["stale_kept"]),
        warnings=list(summary["warnings"]),
        complete=bool(summary["complete"]),
        retired=list(summary["retired"]),
    )


def standard_experiment(
    model: str, *, name: str | None = None, problems: Iterable[str] = (), control: bool = False, **fields: Any
) -> Experiment:
    """Experiment.standard with the name defaulting to the model id."""
    return Experiment.standard(name or model, model, control=control, problems=list(problems), **fields)


__all__ = [
    "Arm",
    "CONTROL_ARMS",
    "Experiment",
    "RunResult",
    "STANDARD_ARMS",
    "agent_executor",
    "fixed_skill",
    "no_skill",
    "plan",
    "resolve_device",
    "run",
    "skill_from_arm",
    "standard_arms",
    "standard_experiment",
]
