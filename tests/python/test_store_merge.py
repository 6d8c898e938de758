"""Pooling across processes: stores of one design run in several places merge into one
(`mkb store merge`, libmkb/store/merge.h), refusing conflicting specs, and `mkb stats` pools
experiments that share a design (libmkb/store/pooling.h)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import experiments as ex
from metakernelbench.reporting import store_stats

PROBLEMS = ["02", "25", "28"]


def attempt(spec) -> dict:
    """A deterministic attempt whose result depends on the trial id (so two experiments of one
    design differ, as two runs would)."""
    digest = int(hashlib.sha256(spec.trial_id.encode()).hexdigest(), 16)
    passed = digest % 3 != 0
    out = {
        "state": "finished",
        "submissions": [
            {
                "index": 0,
                "counted": True,
                "kernel_source": f"# {spec.trial_id}\n",
                "verdict": {"status": "passed" if passed else "mismatch", "passed": passed},
            }
        ],
        "final": {"status": "passed" if passed else "mismatch", "passed": passed},
        "skill_out": {"text": f"lesson of {spec.arm} on {spec.problem_slug}"},
        "usage": {"input_tokens": 100, "output_tokens": 10},
        "trajectory": [{"index": 0, "kind": "assistant", "text": spec.trial_id}],
    }
    if passed:
        out["final"]["speedup_vs_eager"] = 0.5 + (digest % 100) / 25
    return out


def experiment(name: str, **fields) -> ex.Experiment:
    fields.setdefault("replicates", 1)
    return ex.Experiment.standard(
        name, "fake/model", problems=list(PROBLEMS), workload="small", device="cpu", concurrency=2, **fields
    )


def run(store: Path, exp: ex.Experiment, executor=attempt) -> None:
    result = exp.run(store, executor=executor, retry_delay_s=0.01)
    assert result.complete, result.failed


def rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_two_processes_replicates_merge_into_one_store_and_stats_pool_them(tmp_path):
    a, b, merged = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "merged.db"
    # Two machines, one design, each under its own experiment name.
    run(a, experiment("claude-a"))
    run(b, experiment("claude-b"))
    summary = mkb.store.merge([a, b], merged)
    assert summary["experiments"] == ["claude-a", "claude-b"]
    assert summary["trials"] == 2 * 12
    for table in ("trials", "submissions", "verdicts", "skills", "trajectory_events", "usage"):
        assert rows(merged, table) == rows(a, table) + rows(b, table), table
    store = mkb.Store(merged, read_only=True)
    store.core.check_integrity()
    assert (
        store.attempt("claude-b/gqa_paged_decode_h5_kv1_d128_ps1_bf16/solo_tirx/r0").to_dict()
        == mkb.Store(b, read_only=True)
        .attempt("claude-b/gqa_paged_decode_h5_kv1_d128_ps1_bf16/solo_tirx/r0")
        .to_dict()
    )

    # The statistics pool the two experiments as replicates 0 and 1 of one design.
    pooled = store_stats(merged)
    assert pooled.report.counts["n_cells"] == 2 * 6
    assert any("share a design: pooled as 2 replicates" in note for note in pooled.notes)
    cells, notes = store.pooled_cells(["claude-a", "claude-b"])
    assert sorted({int(c.replicate) for c in cells}) == [0, 1]
    # Without pooling, each alone has replicate 0 only.
    assert {int(c.replicate) for c in store.cells("claude-b")} == {0}


def test_merge_refuses_conflicting_specs_and_leaves_nothing(tmp_path):
    a, b, out = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "out.db"
    run(a, experiment("claude"))
    run(b, experiment("claude", replicates=2))  # the same name, another design
    with pytest.raises(mkb.FailedPreconditionError) as error:
        mkb.store.merge([a, b], out)
    message = str(error.value)
    assert "conflicting specs" in message and "'claude'" in message and "replicates" in message
    assert str(a) in message and str(b) in message
    assert not out.exists()
    assert not list(tmp_path.glob(".out.db.merge-*")), "snapshots must be removed"


def test_merge_refuses_a_trial_run_twice_with_different_results(tmp_path):
    a, b, out = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "out.db"
    run(a, experiment("claude"))

    def other(spec):  # the same trials, other results: another run of the same replicate
        result = attempt(spec)
        result["usage"]["input_tokens"] = 7
        return result

    run(b, experiment("claude"), executor=other)
    with pytest.raises(mkb.FailedPreconditionError, match="run in both .* own experiment name"):
        mkb.store.merge([a, b], out)
    assert not out.exists()


def test_merge_takes_a_copy_once_and_a_resolved_try_over_an_unresolved_one(tmp_path):
    a, copy, out = tmp_path / "a.db", tmp_path / "copy.db", tmp_path / "out.db"
    run(a, experiment("claude"))
    mkb.store.merge([a], copy)  # a copy of the store
    summary = mkb.store.merge([a, copy], out)
    assert summary["trials"] == 12 and summary["duplicates"] == 12

    # A copy taken while one trial had not ended (failed there; its run died), merged with the
    # store where it ended: the resolved try is taken.
    partial, out2 = tmp_path / "partial.db", tmp_path / "out2.db"
    mkb.store.merge([a], partial)
    trial = "claude/fused_add_rmsnorm_h4096_llama31_8b_bf16/solo_cutedsl/r0"
    with sqlite3.connect(partial) as db:
        changed = db.execute(
            "UPDATE trials SET state = 'failed', attempt = NULL, passed = NULL, error = 'died' "
            "WHERE trial_id LIKE 'claude/%/solo_cutedsl/r0' AND problem_number = 28"
        ).rowcount
    assert changed == 1
    summary = mkb.store.merge([partial, a], out2)
    assert summary["superseded"] == 1 and summary["duplicates"] == 11
    merged = mkb.Store(out2, read_only=True)
    assert set(merged.trials("claude")["state"]) == {"finished"}
    assert merged.trial(trial)["state"] == "finished"


def test_mkb_store_merge_cli(tmp_path):
    a, b, out = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "out.db"
    run(a, experiment("claude-a"))
    run(b, experiment("claude-b"))
    cli = [sys.executable, "-m", "metakernelbench.cli"]
    done = subprocess.run(
        [*cli, "store", "merge", str(a), str(b), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "2 experiments" in done.stdout and "24 trials" in done.stdout
    again = subprocess.run(
        [*cli, "store", "merge", str(a), str(b), "--out", str(out)], capture_output=True, text=True
    )
    assert again.returncode == 2 and "exists" in again.stderr + again.stdout
    stats = subprocess.run([*cli, "stats", str(out), "--resamples", "200"], capture_output=True, text=True)
    assert stats.returncode == 0, stats.stderr


def test_stats_still_refuses_colliding_experiments_of_different_designs(tmp_path):
    store = tmp_path / "s.db"
    run(store, experiment("one"))
    run(store, experiment("two", budget={"max_submissions": 3}))
    with pytest.raises(
        mkb.FailedPreconditionError,
        match=r"designs differ \(budget.max_submissions: 10 -> 3\): they cannot be pooled",
    ):
        store_stats(store)
