"""Reading the published harness's per-model results trees (strict: a malformed file or field
is an InvalidArgumentError naming both)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _core

#: The published harness's arms, solos first (its catalog): our standard arms (C++ StandardArms).
ARMS = tuple(arm.to_dict()["name"] for arm in _core.standard_arms())
#: A conditioned arm's source solo, and a solo's conditioned arm.
SKILL_SOURCE = {
    d["name"]: d["skill"]["arm"]
    for d in (arm.to_dict() for arm in _core.standard_arms())
    if d["skill"].get("kind") == "arm"
}
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
