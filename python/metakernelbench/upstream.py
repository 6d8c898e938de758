"""Results of the published Python harness, imported into a store.

    import metakernelbench as mkb
    from metakernelbench import upstream
    imported = upstream.import_results("MetaKernelBench/results", "results.db")
    mkb.Store("results.db").stats(imported[0].experiment)

The published harness (github.com/YIGE24/MetaKernelBench: Harbor agents in Modal sandboxes,
graded on B200s) keeps one results tree per model, `results/<model>/`:

    store.json                       {"model": <LiteLLM id>, "prefix": sha256(model)[:6], ...}
    results.json                     its snapshot: aggregates, and each problem's category
    problems/<NN>_<problem>/
        <prefix>_p<NN>_r<k>_<arm>/   one trial: replicate k (from 1), arm solo_cutedsl, solo_tirx,
            record.json              cutedsl2tirx_skill or tirx2cutedsl_skill
            verdict.json             the final verdict's rewards and details (optional)
            submissions.jsonl        one line per submission (optional)
            artifacts/app/SKILL.md   the skill a solo left (optional)
            result.json              Harbor's TrialResult (optional; only its times are read)
        skills/r<k>_<direction>.md   the skill handed to a conditioned trial (optional)
    archive/                         earlier tries (not imported)

record.json holds the trial's outcome: `rewards` (`passed`, `speedup_vs_eager`, `imported`,
`correct`), `timed_out`, `error` (the trial failed after the harness's retries), `skipped` (a
conditioned arm whose source wrote no SKILL.md), `usage` (`n_input_tokens` including cache,
`n_cache_tokens`, `n_output_tokens`, `cost_usd`, `agent_sec`) and `stamps` (`task_fingerprint`,
`skill_sha256`). Each model's tree becomes one experiment of the four standard arms, stored by the
protocol itself (libmkb/protocol) with an executor that replays the records instead of running
agents: every stored attempt, skill hand-over, skip and failure goes through the same code as a
run of our own. docs/statistics.md ("Importing the published harness's results") gives the
mapping field by field. Reading is strict: a malformed file or field is an InvalidArgumentError
naming the file and the field; optional files and fields may be missing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import _core

#: The published harness's arms, solos first (its catalog).
ARMS = ("solo_cutedsl", "solo_tirx", "cutedsl2tirx_skill", "tirx2cutedsl_skill")
#: A conditioned arm's source solo, and a solo's conditioned arm.
SKILL_SOURCE = {"cutedsl2tirx_skill": "solo_cutedsl", "tirx2cutedsl_skill": "solo_tirx"}
DEPENDENT_SKILL = {source: skill for skill, source in SKILL_SOURCE.items()}
DIRECTION = {"cutedsl2tirx_skill": "cutedsl2tirx", "tirx2cutedsl_skill": "tirx2cutedsl"}
FAMILIES = ("attention", "kv_cache", "mlp_norm", "moe", "quantization", "linear_attention")

#: Part of every imported trial's task fingerprint: a change to the mapping below makes
#: earlier imports stale (a re-import then replaces them, archiving the old tries).
MAPPING_VERSION = "upstream-results-v1"
EXPERIMENT_PREFIX = "upstream-"

_PROBLEM_DIR = re.compile(r"(?P<number>[0-9]{2})_(?P<slug>[a-z0-9]+(?:_[a-z0-9]+)*)")
_TRIAL_DIR = re.compile(r"(?P<prefix>[0-9a-f]{6})_p(?P<number>[0-9]{2})_r(?P<k>[0-9]+)_(?P<arm>[a-z0-9_]+)")
_SKILL_FILE = re.compile(r"r(?P<k>[0-9]+)_(?P<direction>cutedsl2tirx|tirx2cutedsl)\.md")
# The header the harness puts above a SKILL.md when it hands it over (metakernelbench/skill.py).
_ATTACHMENT_HEADING = "## Skill from a prior attempt"


def _bad(path: Path, field_path: str, message: str) -> _core.InvalidArgumentError:
    where = f"{path}: {field_path}: " if field_path else f"{path}: "
    return _core.InvalidArgumentError(where + message)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# ------------------------------------------------------------------------------------------------
# Reading the tree


@dataclass(frozen=True)
class Usage:
    """A trial's usage as the harness recorded it (None: not reported)."""

    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    agent_sec: float | None = None


@dataclass(frozen=True)
class Record:
    """One record.json."""

    path: Path
    rewards: dict[str, float]
    timed_out: bool = False
    error: str | None = None
    skipped: str | None = None
    usage: Usage | None = None
    task_fingerprint: str | None = None
    skill_sha256: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        """The harness's rule: rewards.passed >= 1."""
        return self.rewards.get("passed", 0.0) >= 1.0

    @property
    def kind(self) -> str:
        """finished, skipped or error."""
        if self.error is not None:
            return "error"
        return "skipped" if self.skipped is not None else "finished"


@dataclass(frozen=True)
class Trial:
    """A trial folder of the tree (record None: the folder has no record.json)."""

    path: Path
    problem: str  # the harness's problem name, "02_gqa_paged_decode_..."
    number: int
    replicate: int  # the harness's k, from 1
    arm: str
    record: Record | None


@dataclass
class ModelResults:
    """One model's results tree, read and checked."""

    root: Path
    model: str
    prefix: str
    problems: dict[int, str]  # number -> the harness's problem name
    categories: dict[str, str]  # problem name -> category, from results.json (may be empty)
    trials: dict[tuple[int, int, str], Trial]  # (number, k, arm)
    attachments: dict[tuple[int, int, str], Path]  # (number, k, direction) -> skills/r<k>_<d>.md
    digest: str  # SHA-256 over every record.json and store.json, in path order
    warnings: list[str] = field(default_factory=list)

    @property
    def replicates(self) -> int:
        return max((k for _, k, _ in self.trials), default=0)

    def counts(self) -> dict[str, int]:
        """Trial folders by record kind: finished, skipped, error, and no_record."""
        out = {"finished": 0, "skipped": 0, "error": 0, "no_record": 0}
        for trial in self.trials.values():
            out["no_record" if trial.record is None else trial.record.kind] += 1
        return out


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise _core.PermissionDeniedError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise _bad(path, "", f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _bad(
            path, "", f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None


def _object(value: Any, path: Path, field_path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, field_path, f"expected an object, got {_type_name(value)}")
    return value


def _optional(obj: Mapping[str, Any], key: str, kinds: tuple[type, ...], path: Path, prefix: str = "") -> Any:
    """obj[key] when present and not null, checked against kinds (bool is never a number)."""
    value = obj.get(key)
    if value is None:
        return None
    numeric = int in kinds or float in kinds
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        expected = {str: "a string", bool: "true or false", int: "an integer"}.get(kinds[0], "a number")
        raise _bad(path, prefix + key, f"expected {expected}, got {_type_name(value)}")
    if numeric and not isinstance(value, bool):
        if not math.isfinite(value) or value < 0:
            raise _bad(path, prefix + key, f"must be a finite number >= 0, got {value}")
    return value


def read_record(path: Path) -> Record:
    """Parses one record.json (strict: InvalidArgumentError naming the file and the field)."""
    raw = _object(_read_json(path), path, "")
    if "rewards" not in raw:
        raise _bad(path, "rewards", "missing (every record of the harness has it, {} when none)")
    rewards_in = _object(raw["rewards"], path, "rewards")
    rewards: dict[str, float] = {}
    for key, value in rewards_in.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _bad(path, f"rewards.{key}", f"expected a finite number, got {value!r}")
        rewards[key] = float(value)
    timed_out = _optional(raw, "timed_out", (bool,), path) or False
    error = _optional(raw, "error", (str,), path)
    skipped = _optional(raw, "skipped", (str,), path)
    usage = None
    if raw.get("usage") is not None:
        u = _object(raw["usage"], path, "usage")
        usage = Usage(
            n_input_tokens=_optional(u, "n_input_tokens", (int,), path, "usage."),
            n_cache_tokens=_optional(u, "n_cache_tokens", (int,), path, "usage."),
            n_output_tokens=_optional(u, "n_output_tokens", (int,), path, "usage."),
            cost_usd=_optional(u, "cost_usd", (float, int), path, "usage."),
            agent_sec=_optional(u, "agent_sec", (float, int), path, "usage."),
        )
    task_fingerprint = skill_sha256 = None
    if raw.get("stamps") is not None:
        stamps = _object(raw["stamps"], path, "stamps")
        task_fingerprint = _optional(stamps, "task_fingerprint", (str,), path, "stamps.")
        skill_sha256 = _optional(stamps, "skill_sha256", (str,), path, "stamps.")
    if error is not None and skipped is not None:
        raise _bad(path, "skipped", "set together with error; a record is one or the other")
    record = Record(path, rewards, timed_out, error, skipped, usage, task_fingerprint, skill_sha256, raw)
    if record.kind == "finished" and record.passed:
        speedup = rewards.get("speedup_vs_eager")
        if speedup is None:
            raise _bad(path, "rewards.speedup_vs_eager", "missing for a passed trial")
        if speedup <= 0:
            raise _bad(path, "rewards.speedup_vs_eager", f"must be > 0 for a passed trial, got {speedup:g}")
    return record


def _digest_of(root: Path, files: list[Path]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _categories(root: Path) -> dict[str, str]:
    """problem name -> category from results.json's cells (optional file, optional fields)."""
    path = root / "results.json"
    if not path.is_file():
        return {}
    snapshot = _object(_read_json(path), path, "")
    cells = snapshot.get("cells") or []
    if not isinstance(cells, list):
        raise _bad(path, "cells", f"expected a list, got {_type_name(cells)}")
    out: dict[str, str] = {}
    for i, entry in enumerate(cells):
        cell = _object(entry, path, f"cells[{i}]").get("cell")
        if cell is None:
            continue
        cell = _object(cell, path, f"cells[{i}].cell")
        problem = _optional(cell, "problem", (str,), path, f"cells[{i}].cell.")
        category = _optional(cell, "category", (str,), path, f"cells[{i}].cell.")
        if problem and category:
            if out.get(problem, category) != category:
                raise _bad(
                    path,
                    f"cells[{i}].cell.category",
                    f"'{category}', but '{out[problem]}' for {problem} before",
                )
            out[problem] = category
    return out


def is_model_tree(path: str | os.PathLike) -> bool:
    """Whether `path` is one model's results tree (it holds store.json)."""
    return (Path(path) / "store.json").is_file()


def model_trees(path: str | os.PathLike) -> list[Path]:
    """The model trees at `path`: itself when it is one, else its sub-folders that are (the
    harness's `results/`), sorted. NotFoundError when there is none."""
    root = Path(path)
    if not root.is_dir():
        raise _core.NotFoundError(f"{root}: no such folder")
    if is_model_tree(root):
        return [root]
    trees = sorted(p for p in root.iterdir() if p.is_dir() and is_model_tree(p))
    if not trees:
        raise _core.NotFoundError(
            f"{root}: not a results tree of the published harness: neither it nor a sub-folder "
            "holds store.json (expected results/ or results/<model>/)"
        )
    return trees


def read_model_results(path: str | os.PathLike) -> ModelResults:
    """Reads and checks one model's results tree (`results/<model>/`)."""
    root = Path(path)
    identity_path = root / "store.json"
    if not identity_path.is_file():
        raise _core.NotFoundError(f"{identity_path}: missing: {root} is not one model's results tree")
    identity = _object(_read_json(identity_path), identity_path, "")
    model = _optional(identity, "model", (str,), identity_path)
    if not model:
        raise _bad(identity_path, "model", "missing: the model id the results belong to")
    prefix = _optional(identity, "prefix", (str,), identity_path)
    expected_prefix = hashlib.sha256(model.encode()).hexdigest()[:6]
    if prefix is None:
        prefix = expected_prefix
    elif prefix != expected_prefix:
        raise _bad(
            identity_path,
            "prefix",
            f"'{prefix}' is not sha256(model)[:6] = '{expected_prefix}' for '{model}'",
        )
    results = ModelResults(
        root=root,
        model=model,
        prefix=prefix,
        problems={},
        categories=_categories(root),
        trials={},
        attachments={},
        digest="",
    )
    hashed = [identity_path]
    problems_dir = root / "problems"
    if not problems_dir.is_dir():
        raise _core.NotFoundError(f"{problems_dir}: missing: the tree holds no trial")
    for problem_dir in sorted(problems_dir.iterdir()):
        if problem_dir.name.startswith("."):
            continue
        match = _PROBLEM_DIR.fullmatch(problem_dir.name)
        if not problem_dir.is_dir() or match is None:
            raise _bad(
                problem_dir, "", "expected a problem folder named NN_<problem> (lower-case, digits, '_')"
            )
        number = int(match["number"])
        if number in results.problems:
            raise _bad(problem_dir, "", f"problem number {number:02d} also names {results.problems[number]}")
        results.problems[number] = problem_dir.name
        for entry in sorted(problem_dir.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.name == "skills" and entry.is_dir():
                for attachment in sorted(entry.iterdir()):
                    m = _SKILL_FILE.fullmatch(attachment.name)
                    if m is None:
                        results.warnings.append(
                            f"{attachment}: not a skill attachment r<k>_<direction>.md; ignored"
                        )
                        continue
                    results.attachments[(number, int(m["k"]), m["direction"])] = attachment
                continue
            m = _TRIAL_DIR.fullmatch(entry.name)
            if m is None or not entry.is_dir():
                results.warnings.append(f"{entry}: not a trial folder <prefix>_pNN_r<k>_<arm>; ignored")
                continue
            if m["prefix"] != prefix:
                results.warnings.append(
                    f"{entry}: prefix {m['prefix']} is another model's (this tree's is {prefix}); ignored"
                )
                continue
            if int(m["number"]) != number:
                raise _bad(
                    entry, "", f"trial of problem p{m['number']} inside the folder of problem {number:02d}"
                )
            k = int(m["k"])
            if k < 1:
                raise _bad(entry, "", "replicate r0: the harness counts replicates from 1")
            arm = m["arm"]
            if arm not in ARMS:
                raise _bad(entry, "", f"unknown arm '{arm}'; the harness's arms are {', '.join(ARMS)}")
            record_path = entry / "record.json"
            record = None
            if record_path.is_file():
                record = read_record(record_path)
                hashed.append(record_path)
            results.trials[(number, k, arm)] = Trial(entry, problem_dir.name, number, k, arm, record)
    if not results.trials:
        raise _core.NotFoundError(f"{problems_dir}: no trial folder of model '{model}' (prefix {prefix})")
    for trial in results.trials.values():
        record = trial.record
        if record is not None and record.skipped is not None and trial.arm not in SKILL_SOURCE:
            raise _bad(
                record.path, "skipped", f"set on a solo ({trial.arm}); only conditioned arms are skipped"
            )
    results.digest = _digest_of(root, hashed)
    return results


# ------------------------------------------------------------------------------------------------
# Replaying the records as attempts


def _read_text(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise _core.PermissionDeniedError(f"{path}: cannot read: {error.strerror}") from None


def _attachment_body(text: str) -> str:
    """A handed-over skill without the harness's header (its heading and one sentence)."""
    if not text.startswith(_ATTACHMENT_HEADING):
        return text
    parts = text.split("\n\n", 2)
    return parts[2] if len(parts) == 3 else ""


def _iso_unix(value: Any, path: Path, key: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(path, key, f"expected an ISO 8601 time, got {_type_name(value)}")
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise _bad(path, key, f"'{value}' is not an ISO 8601 time") from None


class Replay:
    """The executor of an import: TrialSpec -> the Attempt the tree recorded for that trial.

    Every attempt is built when the Replay is made, so that a malformed file stops the import
    before the store is touched (an exception inside a run would only fail that trial). Absent
    records and the harness's errors raise when the trial is asked for (the trial is stored as
    failed: unresolved, as in the harness's own statistics). The skill a solo leaves is its
    SKILL.md; a solo whose conditioned trial was recorded as skipped leaves an empty one, so that
    the protocol records the same skip."""

    def __init__(self, results: ModelResults):
        self.results = results
        self.fingerprint_salt = f"{MAPPING_VERSION}:{results.digest[:16]}"
        self.attempts: dict[tuple[int, int, str], dict[str, Any]] = {}
        for key, trial in sorted(results.trials.items()):
            record = trial.record
            if record is None or record.error is not None:
                continue
            if record.skipped is not None:
                self._check_skip(trial, record)
                continue
            self.attempts[key] = self._attempt(trial, record)

    def __call__(self, spec: Any) -> dict[str, Any]:
        key = (int(spec.problem_number), int(spec.replicate) + 1, str(spec.arm))
        trial = self.results.trials.get(key)
        if trial is None or trial.record is None:
            what = "no trial folder" if trial is None else "no record.json"
            raise _core.NotFoundError(
                f"{self._expected_dir(key)}: {what}: the trial is not in the upstream results tree"
            )
        record = trial.record
        if record.error is not None:
            raise _core.FailedPreconditionError(
                f"{record.path}: error: the published harness recorded a failed trial: {record.error}"
            )
        if record.skipped is not None:  # the protocol skips it without asking (see _check_skip)
            raise _core.InternalError(f"{record.path}: a skipped trial was asked for")
        return self.attempts[key]

    def _check_skip(self, trial: Trial, record: Record) -> None:
        """A skipped conditioned trial's source must have left no skill (the harness's rule)."""
        source = self.results.trials.get((trial.number, trial.replicate, SKILL_SOURCE[trial.arm]))
        if source is None:
            return
        if self._skill_text(source) is not None:
            raise _bad(
                record.path,
                "skipped",
                f"recorded as skipped, but its source {source.path.name} left a non-empty SKILL.md",
            )

    def _expected_dir(self, key: tuple[int, int, str]) -> Path:
        number, k, arm = key
        problem = self.results.problems.get(number, f"{number:02d}_*")
        return self.results.root / "problems" / problem / f"{self.results.prefix}_p{number:02d}_r{k}_{arm}"

    def _skill_text(self, trial: Trial) -> str | None:
        """The non-empty SKILL.md a solo left: its artifacts, else the attachment handed over."""
        body = _read_text(trial.path / "artifacts" / "app" / "SKILL.md")
        if body is None or not body.strip():
            direction = DIRECTION[DEPENDENT_SKILL[trial.arm]]
            attachment = self.results.attachments.get((trial.number, trial.replicate, direction))
            body = _attachment_body(_read_text(attachment) or "") if attachment is not None else None
        return body if body is not None and body.strip() else None

    def _skill_out(self, trial: Trial) -> str:
        """What a solo hands to its conditioned arm (see the class docstring)."""
        dependent = self.results.trials.get((trial.number, trial.replicate, DEPENDENT_SKILL[trial.arm]))
        skipped = (
            dependent is not None and dependent.record is not None and dependent.record.skipped is not None
        )
        body = self._skill_text(trial)
        if body is not None:
            return body  # a skipped dependent with a non-empty skill is refused by _check_skip
        if skipped:
            return ""
        # The skill is not in the tree (artifacts pruned), or the conditioned trial never ran:
        # a marker that is not empty, so that the conditioned trial is looked up, not skipped.
        return f"[SKILL.md of {trial.path.name} is not in the upstream results tree]"

    def _attempt(self, trial: Trial, record: Record) -> dict[str, Any]:
        verdict_path = trial.path / "verdict.json"
        details: dict[str, Any] = {}
        report = ""
        if verdict_path.is_file():
            verdict = _object(_read_json(verdict_path), verdict_path, "")
            details = _object(verdict.get("details") or {}, verdict_path, "details")
            report = _optional(verdict, "report", (str,), verdict_path) or ""
        final = _final_verdict(record, details, report)
        attempt: dict[str, Any] = {
            "state": "finished",
            "final": final,
            "workspace_dir": str(trial.path.resolve()),
            "sandbox": "none: imported from the published harness's results (Harbor sandboxes on Modal)",
        }
        if record.timed_out:
            attempt["stop_reason"] = "time_budget"
        submissions = _submissions(trial.path / "submissions.jsonl")
        if submissions:
            attempt["submissions"] = submissions
            passing = [s["index"] for s in submissions if s["verdict"].get("passed")]
            attempt["best_submission"] = passing[-1] if passing else -1
        if trial.arm in DEPENDENT_SKILL:
            attempt["skill_out"] = {"text": self._skill_out(trial)}
        if record.usage is not None:
            u = record.usage
            usage = {
                "input_tokens": u.n_input_tokens,
                "cached_input_tokens": u.n_cache_tokens,
                "output_tokens": u.n_output_tokens,
                "cost_usd": u.cost_usd,
                "agent_seconds": u.agent_sec,
            }
            attempt["usage"] = {k: v for k, v in usage.items() if v is not None}
        harbor_path = trial.path / "result.json"
        if harbor_path.is_file():
            harbor = _object(_read_json(harbor_path), harbor_path, "")
            started = _iso_unix(harbor.get("started_at"), harbor_path, "started_at")
            finished = _iso_unix(harbor.get("finished_at"), harbor_path, "finished_at")
            if started is not None:
                attempt["started_unix"] = started
            if finished is not None:
                attempt["finished_unix"] = finished
        provenance = {
            "source": "published harness results tree",
            "model_tree": str(self.results.root.resolve()),
            "trial": trial.path.name,
            "record": record.raw,
        }
        attempt["trajectory"] = [
            {
                "index": 0,
                "kind": "note",
                "text": f"imported from {trial.path}/record.json (the published harness)",
                "json": json.dumps(provenance, sort_keys=True),
            }
        ]
        return attempt


def _final_verdict(record: Record, details: Mapping[str, Any], report: str) -> dict[str, Any]:
    """The final Verdict from the harness's rewards: passed and speedup_vs_eager as recorded; the
    status from how far the kernel got (imported, correct, passed)."""
    rewards = record.rewards
    error = details.get("error") if isinstance(details.get("error"), str) else None
    mismatch = details.get("mismatch") if isinstance(details.get("mismatch"), str) else None
    final: dict[str, Any] = {
        "imported": rewards.get("imported", 0.0) >= 1.0 or record.passed,
        "correct": rewards.get("correct", 0.0) >= 1.0 or record.passed,
        "passed": record.passed,
    }
    if record.passed:
        final["status"] = "passed"
        final["speedup_vs_eager"] = rewards["speedup_vs_eager"]
    elif not rewards:
        final["status"] = "invalid_submission"  # no kernel.py collected, or over the size limit
    elif final["correct"]:
        final["status"] = "correct"
    elif final["imported"]:
        final["status"] = "exception" if error and not mismatch else "mismatch"
    else:
        final["status"] = "import_error"
    if isinstance(details.get("n_correct_draws"), int) and not isinstance(
        details.get("n_correct_draws"), bool
    ):
        final["correct_draws"] = details["n_correct_draws"]
    message = mismatch or error or report.strip()
    if message:
        final["message"] = message.strip().splitlines()[-1][:500]
    return final


def _submissions(path: Path) -> list[dict[str, Any]]:
    """submissions.jsonl: {counted, elapsed_sec, rewards, note, ...} per line (optional file)."""
    if not path.is_file():
        return []
    out: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                raise _bad(path, f"line {number}", f"not valid JSON: {error.msg}") from None
            entry = _object(entry, path, f"line {number}")
            rewards = entry.get("rewards") or {}
            if not isinstance(rewards, dict):
                raise _bad(path, f"line {number}.rewards", f"expected an object, got {_type_name(rewards)}")
            passed = bool(rewards.get("passed", 0) >= 1) if rewards else False
            counted = entry.get("counted")
            if not isinstance(counted, bool):
                raise _bad(
                    path, f"line {number}.counted", f"expected true or false, got {_type_name(counted)}"
                )
            verdict: dict[str, Any] = {"passed": passed}
            if counted:
                verdict["status"] = "passed" if passed else "mismatch"
                if passed and isinstance(rewards.get("speedup_vs_eager"), (int, float)):
                    verdict["speedup_vs_eager"] = float(rewards["speedup_vs_eager"])
            else:
                verdict["status"] = "invalid_submission"
                if isinstance(entry.get("note"), str):
                    verdict["message"] = entry["note"]
            submission: dict[str, Any] = {"index": len(out), "counted": counted, "verdict": verdict}
            if isinstance(entry.get("elapsed_sec"), (int, float)):
                submission["at_agent_seconds"] = float(entry["elapsed_sec"])
            out.append(submission)
    return out


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
    from .experiments import Experiment

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
    from .suite import Suite, load_suite

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
    from . import experiments
    from .store import Store

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
        from .suite import load_suite

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


__all__ = [
    "ARMS",
    "ImportResult",
    "ModelResults",
    "Record",
    "PreparedImport",
    "Replay",
    "Trial",
    "Usage",
    "experiment_for",
    "import_model_results",
    "import_results",
    "is_model_tree",
    "model_trees",
    "prepare_model_import",
    "read_model_results",
    "store_model_import",
    "read_record",
]
