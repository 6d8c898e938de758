"""Replaying the published records as attempts: what the protocol stores for each trial."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import _core
from .tree import (
    _ATTACHMENT_HEADING,
    DEPENDENT_SKILL,
    DIRECTION,
    MAPPING_VERSION,
    SKILL_SOURCE,
    ModelResults,
    Record,
    Trial,
    _bad,
    _object,
    _optional,
    _read_json,
    _type_name,
)

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
    # The status is the C++ core's mapping (libmkb/model/published_outcome.h); no rewards at all
    # means no kernel.py was collected, or it was over the size limit.
    final["status"] = _core.status_of_published_outcome(
        has_rewards=bool(rewards),
        imported=final["imported"],
        correct=final["correct"],
        passed=record.passed,
        error=bool(error),
        mismatch=bool(mismatch),
    )
    if record.passed:
        final["speedup_vs_eager"] = rewards["speedup_vs_eager"]
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
            verdict: dict[str, Any] = {
                "passed": passed,
                "status": _core.status_of_published_submission(counted=counted, passed=passed),
            }
            if counted:
                if passed and isinstance(rewards.get("speedup_vs_eager"), (int, float)):
                    verdict["speedup_vs_eager"] = float(rewards["speedup_vs_eager"])
            elif isinstance(entry.get("note"), str):
                verdict["message"] = entry["note"]
            submission: dict[str, Any] = {"index": len(out), "counted": counted, "verdict": verdict}
            if isinstance(entry.get("elapsed_sec"), (int, float)):
                submission["at_agent_seconds"] = float(entry["elapsed_sec"])
            out.append(submission)
    return out
