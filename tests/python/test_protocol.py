"""The protocol from Python (metakernelbench.experiments) on fake executors: end to end, the
plan and its order, retries with archiving, stale detection, resume, custom arms, progress,
cancelling, the CLI (`mkb run`), and a kill -9 / resume test."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import experiments as ex

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = ["02", "25", "28"]


def fake_attempt(spec, skill: str | None = None) -> dict:
    """A deterministic attempt: the same trial always gives the same result."""
    digest = int(hashlib.sha256(spec.trial_id.encode()).hexdigest(), 16)
    passed = digest % 4 != 0
    n = 1 + digest % 3
    attempt = {
        "state": "finished",
        "submissions": [
            {
                "index": i,
                "counted": True,
                "kernel_source": f"# {spec.trial_id} v{i}\n",
                "verdict": {
                    "status": "passed" if passed and i == n - 1 else "mismatch",
                    "passed": passed and i == n - 1,
                },
            }
            for i in range(n)
        ],
        "final": {"status": "passed" if passed else "mismatch", "passed": passed},
        "skill_out": {"text": skill if skill is not None else f"lesson of {spec.arm} on {spec.problem_slug}"},
        "usage": {"input_tokens": 100 * n, "output_tokens": 10 * n, "cost_usd": 0.001 * n},
        "trajectory": [{"index": 0, "kind": "assistant", "text": f"working on {spec.trial_id}"}],
    }
    if passed:
        attempt["final"]["speedup_vs_eager"] = 0.5 + (digest % 100) / 25
    return attempt


def experiment(name="exp", replicates=1, **fields) -> ex.Experiment:
    fields.setdefault("concurrency", 2)
    return ex.Experiment.standard(
        name,
        "fake/model",
        problems=list(PROBLEMS),
        replicates=replicates,
        workload="small",
        device="cpu",
        **fields,
    )


class Recorder:
    """A fake executor that records its calls."""

    def __init__(self, behaviour=None):
        self.calls: list[tuple[str, int]] = []
        self.behaviour = behaviour

    def __call__(self, spec):
        self.calls.append((spec.trial_id, spec.try_number))
        if self.behaviour is not None:
            return self.behaviour(spec)
        return fake_attempt(spec)


def test_run_end_to_end_stores_every_trial_and_hands_skills_over(tmp_path, suite):
    executor = Recorder()
    result = experiment().run(tmp_path / "r.db", executor=executor, suite=suite, retry_delay_s=0)
    assert result.complete
    assert result.progress["planned"] == 12 and result.progress["finished"] == 12
    assert len(executor.calls) == 12
    trials = result.trials
    assert len(trials) == 12 and set(trials["state"]) == {"finished"}
    assert trials["trial_id"].is_unique
    store = result.store
    for row in trials[trials["arm"] == "cutedsl2tirx_skill"].itertuples():
        source = store.attempt(f"exp/{row.problem_slug}/solo_cutedsl/r0")
        skilled = store.attempt(row.trial_id)
        assert skilled.skill_in.text == source.skill_out.text
        assert skilled.skill_in.source_attempt_id == f"exp/{row.problem_slug}/solo_cutedsl/r0"
    report = result.stats({"bootstrap_resamples": 50})
    assert report.counts["n_cells"] == 6


def test_plan_is_problems_x_arms_x_replicates_solos_first(tmp_path, suite):
    path = tmp_path / "r.db"
    frame = experiment(replicates=2).plan(path, suite=suite, executor=Recorder())
    assert not path.exists()  # a dry run creates nothing
    assert len(frame) == 3 * 4 * 2
    assert list(frame["skill_source"][:12]) == ["none"] * 12
    assert set(frame["skill_source"][12:]) == {"arm"}
    skill = frame[frame["arm"] == "tirx2cutedsl_skill"].iloc[0]
    assert skill["depends_on"] == f"exp/{skill['problem_slug']}/solo_tirx/r{skill['replicate']}"
    assert set(frame["action"]) == {"run"}
    experiment().run(path, executor=Recorder(), suite=suite, retry_delay_s=0)
    again = experiment().plan(path, suite=suite, executor=Recorder())
    assert set(again["action"]) == {"reuse"}


def test_transient_failures_are_retried_and_archived_other_errors_fail(tmp_path, suite):
    failures: dict[str, int] = {}

    def behaviour(spec):
        if spec.arm == "solo_tirx" and spec.problem_slug.startswith("batched"):
            failures[spec.trial_id] = failures.get(spec.trial_id, 0) + 1
            if failures[spec.trial_id] <= 2:
                raise mkb.UnavailableError("model API: 503")
        if spec.arm == "solo_cutedsl" and spec.problem_slug.startswith("gqa"):
            raise ValueError("bug in the executor")
        return fake_attempt(spec)

    result = experiment().run(tmp_path / "r.db", executor=Recorder(behaviour), suite=suite, retry_delay_s=0)
    assert not result.complete
    assert result.progress["retries"] == 2
    assert len(result.failed) == 1 and "ValueError: bug in the executor" in result.failed[0]
    assert len(result.blocked) == 1 and "gqa" in result.blocked[0]  # its skill arm
    archived = result.store.archived_tries("exp")
    assert list(archived["reason"]) == ["transient", "transient"]
    assert list(archived["try_number"]) == [1, 2]
    assert all("503" in e for e in archived["error"])
    trials = result.trials.set_index("trial_id")
    flaky = "exp/batched_kv_cache_block_copy_remap_uint8/solo_tirx/r0"
    assert trials.loc[flaky, "state"] == "finished" and trials.loc[flaky, "try_number"] == 3
    assert trials.loc["exp/gqa_paged_decode_h5_kv1_d128_ps1_bf16/solo_cutedsl/r0", "state"] == "failed"


def test_resume_reuses_finished_trials_and_reruns_failed_ones(tmp_path, suite):
    path = tmp_path / "r.db"

    def broken(spec):
        if spec.trial_id.endswith("28_x"):  # never
            return fake_attempt(spec)
        if "fused_add" in spec.problem_slug and spec.arm == "solo_tirx":
            raise mkb.PermissionDeniedError("401: bad key")
        return fake_attempt(spec)

    first = experiment().run(path, executor=Recorder(broken), suite=suite, retry_delay_s=0)
    assert first.progress["failed"] == 1 and first.progress["finished"] == 10
    before = {r.trial_id: r.updated_unix for r in first.trials.itertuples()}
    executor = Recorder()
    second = experiment().run(path, executor=executor, suite=suite, retry_delay_s=0)
    assert second.complete
    assert second.progress["reused"] == 10
    assert [t for t, _ in executor.calls] == [
        "exp/fused_add_rmsnorm_h4096_llama31_8b_bf16/solo_tirx/r0",
        "exp/fused_add_rmsnorm_h4096_llama31_8b_bf16/tirx2cutedsl_skill/r0",
    ]
    assert executor.calls[0][1] == 2  # the failed try was archived
    after = second.trials.set_index("trial_id")
    for trial_id, updated in before.items():
        if trial_id.endswith(("solo_tirx/r0", "tirx2cutedsl_skill/r0")) and "fused_add" in trial_id:
            continue
        assert after.loc[trial_id, "updated_unix"] == updated  # untouched
    archived = second.store.archived_tries("exp")
    assert list(archived["reason"]) == ["failed"]
    third = Recorder()
    assert experiment().run(path, executor=third, suite=suite).progress["reused"] == 12
    assert third.calls == []


def test_stale_trials_are_refused_unless_rerun_stale(tmp_path, suite):
    path = tmp_path / "r.db"
    experiment().run(path, executor=Recorder(), suite=suite, retry_delay_s=0)
    changed = experiment(budget={"agent_seconds": 600})
    executor = Recorder()
    with pytest.raises(mkb.FailedPreconditionError, match="12 resolved trials are stale.*--rerun-stale"):
        changed.run(path, executor=executor, suite=suite)
    assert executor.calls == []
    assert set(changed.plan(path, suite=suite, executor=executor)["action"]) == {"stale"}
    result = changed.run(path, executor=executor, suite=suite, rerun_stale=True)
    assert result.complete and len(executor.calls) == 12
    assert set(result.store.archived_tries("exp")["reason"]) == {"stale"}
    assert set(result.trials["try_number"]) == {2}


def test_the_executors_salt_is_part_of_every_task_fingerprint(tmp_path, suite):
    class Versioned(Recorder):
        fingerprint_salt = "agent-v1"

    path = tmp_path / "r.db"
    experiment().run(path, executor=Versioned(), suite=suite)
    assert set(experiment().plan(path, suite=suite, executor=Versioned())["action"]) == {"reuse"}
    Versioned.fingerprint_salt = "agent-v2"  # e.g. the agent's instructions changed
    assert set(experiment().plan(path, suite=suite, executor=Versioned())["action"]) == {"stale"}
    if hasattr(mkb._core, "AgentTrialExecutor"):  # executor=None: the agent's salt
        # Defined once, in C++: what a C++ RunExperiment with the agent uses is Python's too.
        assert ex.agent_fingerprint_salt() == mkb._core.agent_fingerprint_salt()
        assert ex.agent_fingerprint_salt().startswith("agent-instructions:")
        executor = ex.agent_executor(
            "scripted/demo", suite=suite, workspace_root=tmp_path / "ws", device="cpu"
        )
        assert executor.fingerprint_salt == ex.agent_fingerprint_salt()


def test_custom_arms_placebo_same_dsl_control_and_another_models_skill(tmp_path, suite):
    path = tmp_path / "r.db"
    teacher = ex.Experiment.standard(
        "teacher", "fake/teacher", problems=["28"], replicates=1, workload="small", device="cpu"
    )
    teacher.run(path, executor=Recorder(), suite=suite)
    exp = ex.Experiment(
        "custom", "fake/student", problems=["28"], replicates=1, workload="small", device="cpu"
    )
    exp.add_arm("solo_tirx", "tirx")
    exp.add_arm("solo_cutedsl", "cutedsl")
    exp.add_arm("cutedsl2tirx_skill", "tirx", skill=ex.skill_from_arm("solo_cutedsl"), base="solo_tirx")
    exp.add_arm(
        "tirx_placebo",
        "tirx",
        skill=ex.fixed_skill("Prefer 128-wide tiles.", origin="placebo"),
        base="solo_tirx",
    )
    exp.add_arm(
        "tirx_human",
        "tirx",
        skill=ex.fixed_skill("Fuse the add into the norm.", origin="human"),
        base="solo_tirx",
    )
    exp.add_arm("tirx2tirx_skill", "tirx", skill=ex.skill_from_arm("solo_tirx"), base="solo_tirx")
    exp.add_arm(
        "teacher_skill_tirx",
        "tirx",
        skill=ex.skill_from_arm("solo_cutedsl", model="fake/teacher"),
        base="solo_tirx",
    )
    exp.add_arm("solo_tirx_control", "tirx", base="solo_tirx")
    result = exp.run(path, executor=Recorder(), suite=suite)
    assert result.complete
    store = result.store
    slug = "fused_add_rmsnorm_h4096_llama31_8b_bf16"
    assert store.attempt(f"custom/{slug}/tirx_placebo/r0").skill_in.origin == "placebo"
    assert store.attempt(f"custom/{slug}/tirx_human/r0").skill_in.text == "Fuse the add into the norm."
    same = store.attempt(f"custom/{slug}/tirx2tirx_skill/r0").skill_in
    assert same.source_dsl == "tirx"
    borrowed = store.attempt(f"custom/{slug}/teacher_skill_tirx/r0").skill_in
    assert borrowed.source_model == "fake/teacher"
    assert borrowed.text == store.attempt(f"teacher/{slug}/solo_cutedsl/r0").skill_out.text
    cells = store.cells_frame("custom")
    assert set(cells["direction"]) == {
        "cutedsl2tirx",
        "tirx_placebo",
        "tirx_human",
        "tirx2tirx_skill",
        "teacher_skill_tirx",
    }
    assert cells["control_resolved"].all()
    assert set(cells[cells["direction"] == "teacher_skill_tirx"]["source_arm"]) == {
        "fake/teacher:solo_cutedsl"
    }
    report = store.stats("custom", {"bootstrap_resamples": 50})
    assert report.counts["n_with_control"] == 5


def test_progress_events_and_cancel(tmp_path, suite):
    events = []
    result = experiment().run(tmp_path / "a.db", executor=Recorder(), suite=suite, progress=events.append)
    kinds = [e["kind"] for e in events]
    assert kinds.count("started") == 12 and kinds.count("finished") == 12
    assert events[-1]["progress"]["done"] == 12
    assert events[-1]["progress"]["submissions"] == result.progress["submissions"] > 0

    calls = Recorder()
    with pytest.raises(mkb.CancelledError, match="run it again to resume"):
        experiment(concurrency=1).run(
            tmp_path / "b.db", executor=calls, suite=suite, cancel=lambda: len(calls.calls) >= 2
        )
    assert 2 <= len(calls.calls) < 12
    rest = Recorder()
    resumed = experiment().run(tmp_path / "b.db", executor=rest, suite=suite)
    assert resumed.complete and len(calls.calls) + len(rest.calls) == 12


def test_bad_specs_name_the_field(tmp_path, suite):
    exp = experiment()
    exp.add_arm("broken", "tirx", skill=ex.skill_from_arm("nope"), base="solo_tirx")
    with pytest.raises(mkb.InvalidArgumentError, match=r"arms\[4\]\.skill\.arm: no arm named 'nope'"):
        exp.plan(suite=suite)
    with pytest.raises(mkb.NotFoundError, match="problems"):
        ex.Experiment.standard("x", "m", problems=["zzz_*"], workload="small", device="cpu").plan(suite=suite)
    with pytest.raises(mkb.InvalidArgumentError, match="executor"):
        experiment().run(tmp_path / "r.db", executor=42, suite=suite)


# ------------------------------------------------------------------------------------------------
# The CLI


def _mkb(*args, env=None, cwd=None):
    proc = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    return proc.returncode, proc.stdout, proc.stderr


EXECUTOR_MODULE = """
import hashlib
def executor(spec):
    ok = int(hashlib.sha256(spec.trial_id.encode()).hexdigest(), 16) % 3 != 0
    final = {"status": "passed" if ok else "mismatch", "passed": ok}
    if ok:
        final["speedup_vs_eager"] = 1.25
    return {"submissions": [{"index": 0, "counted": True, "verdict": final}], "final": final,
            "skill_out": {"text": "lesson"}, "usage": {"input_tokens": 1000, "output_tokens": 50}}
"""


def test_cli_run_dry_run_prints_the_plan(tmp_path):
    code, out, err = _mkb(
        "run",
        "--model",
        "fake/model",
        "--problems",
        "02,28",
        "--replicates",
        "2",
        "--dry-run",
        "--store",
        str(tmp_path / "r.db"),
        "--device",
        "cpu",
    )
    assert code == 0, err
    assert "2 problems x 4 arms x 2 replicates = 16 trials" in out
    assert "actions: run 16" in out
    assert not (tmp_path / "r.db").exists()


def test_cli_run_with_an_executor_then_reuse_then_export(tmp_path):
    (tmp_path / "fake_exec.py").write_text(EXECUTOR_MODULE)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    store = tmp_path / "r.db"
    args = (
        "run",
        "--model",
        "fake/model",
        "--problems",
        "28",
        "--families",
        "mlp_norm",
        "--replicates",
        "1",
        "--store",
        str(store),
        "--device",
        "cpu",
        "--executor",
        "fake_exec:executor",
    )
    code, out, err = _mkb(*args, env=env)
    assert code == 0, err
    assert "4/4 trials done" in out and "final regrade per trial" in out
    code, out, err = _mkb(*args, env=env)
    assert code == 0, err
    assert "reused 4" in out
    code, out, err = _mkb("export", str(store), "--format", "csv", "--out", str(tmp_path / "csv"))
    assert code == 0, err
    assert (tmp_path / "csv" / "trials.csv").exists() and (tmp_path / "csv" / "cells.csv").exists()
    code, _, err = _mkb("run", "--model", "fake/model", "--arms", "nope", "--dry-run")
    assert code == 2 and "unknown arm 'nope'" in err


# ------------------------------------------------------------------------------------------------
# kill -9 at random moments, then resume: nothing lost, nothing duplicated

CHILD = """
import os, sys, time, random, hashlib
import metakernelbench as mkb
from metakernelbench import experiments as ex

store_path, log_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)

def log(line):
    with open(log_path, "a") as f:   # O_APPEND: whole lines, kept when the process is killed
        f.write(line + "\\n")

def executor(spec):
    time.sleep(rng.uniform(0.02, 0.2))
    digest = int(hashlib.sha256(spec.trial_id.encode()).hexdigest(), 16)
    if digest % 5 == 0 and f"U {spec.trial_id}" not in open(log_path).read():
        log(f"U {spec.trial_id}")
        raise mkb.UnavailableError("flaky infrastructure")
    log(f"R {spec.trial_id} {spec.try_number}")
    n = 1 + digest % 3
    return {"submissions": [{"index": i, "counted": True, "kernel_source": f"k{i}"} for i in range(n)],
            "final": {"status": "passed", "passed": True, "speedup_vs_eager": 1 + digest % 7},
            "skill_out": {"text": f"skill {spec.trial_id}"},
            "usage": {"input_tokens": n}}

exp = ex.Experiment.standard("kill", "fake/model", problems=["02", "25", "28"], replicates=4,
                             concurrency=4, workload="small", device="cpu")
print("ready", flush=True)
ex.run(exp, store_path, executor=executor, retry_delay_s=0)
print("complete")
"""


def _expected_submissions(trial_id: str) -> int:
    return 1 + int(hashlib.sha256(trial_id.encode()).hexdigest(), 16) % 3


def test_kill_9_at_random_moments_then_resume_loses_and_duplicates_nothing(tmp_path):
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    store_path, log_path = tmp_path / "kill.db", tmp_path / "executor.log"
    log_path.write_text("")
    rng = random.Random(20260101)
    finished_seen: dict[str, bytes] = {}  # trial -> its attempt, once seen finished
    log_offset_when_finished: dict[str, int] = {}
    kills = 0
    for round_ in range(8):
        proc = subprocess.Popen(
            [sys.executable, str(child), str(store_path), str(log_path), str(round_ + 1)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready"  # imported: the run starts now
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += proc.returncode == -signal.SIGKILL
        if not store_path.exists():
            continue
        store = mkb.Store(store_path, create=False)
        store.check_integrity()  # never corrupt, at any moment
        log_size = len(log_path.read_text())
        for row in store.trials("kill").itertuples():
            if row.trial_id in finished_seen:
                # Nothing lost: a trial seen finished stays finished, with the same attempt.
                assert row.state == "finished", row.trial_id
                assert store.attempt(row.trial_id).serialize() == finished_seen[row.trial_id]
            elif row.state == "finished":
                finished_seen[row.trial_id] = store.attempt(row.trial_id).serialize()
                log_offset_when_finished[row.trial_id] = log_size
        del store
    assert kills >= 5  # most rounds were killed mid-run
    proc = subprocess.run(
        [sys.executable, str(child), str(store_path), str(log_path), "99"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "complete" in proc.stdout

    store = mkb.Store(store_path, create=False)
    store.check_integrity()
    trials = store.trials("kill")
    assert len(trials) == 3 * 4 * 4 and trials["trial_id"].is_unique
    assert set(trials["state"]) == {"finished"}
    log = log_path.read_text()
    for row in trials.itertuples():
        attempt = store.attempt(row.trial_id)
        # Nothing duplicated: the current try's rows match its attempt exactly.
        assert row.submissions == _expected_submissions(row.trial_id) == len(attempt.submissions)
        if row.trial_id in finished_seen:
            assert attempt.serialize() == finished_seen[row.trial_id]
            # ... and it never ran again once it was finished.
            assert f"R {row.trial_id} " not in log[log_offset_when_finished[row.trial_id] :]
        if row.arm.endswith("_skill"):
            source_arm = "solo_cutedsl" if row.arm.startswith("cutedsl") else "solo_tirx"
            source = store.attempt(f"kill/{row.problem_slug}/{source_arm}/r{row.replicate}")
            assert attempt.skill_in.text == source.skill_out.text
    submissions = store.submissions("kill")
    assert not submissions.duplicated(["trial_id", "try_number", "index"]).any()
    current = submissions[submissions["current"] == 1]
    assert current.groupby("trial_id").size().to_dict() == {
        t: _expected_submissions(t) for t in trials["trial_id"]
    }
    archived = store.archived_tries("kill")
    assert set(archived["reason"]) <= {"interrupted", "transient"}
    assert "interrupted" in set(archived["reason"])  # kills landed while tries were running
    assert not archived.duplicated(["trial_id", "try_number"]).any()
    by_trial = trials.set_index("trial_id")["try_number"]
    for row in archived.itertuples():
        assert row.try_number < by_trial[row.trial_id]
    # Each transient failure left an archived try (interrupted when the kill came before the
    # archive was committed).
    flaky = {line.split()[1] for line in log.splitlines() if line.startswith("U ")}
    assert flaky <= set(archived["trial_id"])
    # The tries of each trial are numbered 1..n without gaps: archived ones and the current one.
    for trial_id, current_try in by_trial.items():
        tries = sorted(archived[archived["trial_id"] == trial_id]["try_number"])
        assert tries == list(range(1, current_try))


def test_the_arms_are_the_cores():
    """The standard and control arms are defined once, in C++ (libmkb/model/defaults.h): the
    experiment API and the published-results importer read them from there."""
    from metakernelbench import upstream

    core = [a.to_dict() for a in (*mkb._core.standard_arms(), *mkb._core.control_arms())]
    ours = [a.to_dict() for a in ex.standard_arms(control=True)]
    assert [(a["name"], a["dsl"], a.get("base_arm", "")) for a in ours] == [
        (a["name"], a["dsl"], a["base_arm"]) for a in core
    ]
    assert [a["skill"].get("arm") for a in ours] == [a["skill"]["arm"] or None for a in core]
    assert upstream.ARMS == ex.STANDARD_ARMS
    assert upstream.SKILL_SOURCE == {"cutedsl2tirx_skill": "solo_cutedsl", "tirx2cutedsl_skill": "solo_tirx"}
