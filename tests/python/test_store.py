"""The results store from Python (metakernelbench.Store): tables as DataFrames, attempts and
trajectories, the statistics' input, export to JSON Lines, CSV and Parquet, and its errors."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3

import metakernelbench as mkb
import pandas as pd
import pytest
from metakernelbench import experiments as ex
from metakernelbench.store import TABLES


def _attempt(spec):
    passed = spec.arm != "solo_tirx"
    final = {"status": "passed" if passed else "mismatch", "passed": passed}
    if passed:
        final["speedup_vs_eager"] = 2.0
    return {
        "submissions": [{"index": 0, "counted": True, "kernel_source": 'x = "a,b"\n', "verdict": final}],
        "final": final,
        "skill_out": {"text": f"from {spec.arm}"},
        "usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5},
        "trajectory": [{"index": i, "kind": "assistant", "text": f"step {i}"} for i in range(3)],
    }


@pytest.fixture
def filled(tmp_path, suite):
    exp = ex.Experiment.standard(
        "s", "fake/model", problems=["25", "28"], replicates=1, workload="small", device="cpu"
    )
    result = exp.run(tmp_path / "r.db", executor=_attempt, suite=suite)
    assert result.complete
    return result.store


def test_tables_as_dataframes(filled):
    from metakernelbench import _core

    assert TABLES == tuple(_core.store.table_names())
    assert TABLES == (
        "experiments",
        "trials",
        "attempts",
        "archived_tries",
        "submissions",
        "verdicts",
        "skills",
        "trajectories",
        "usage",
        "cells",
    )
    trials = filled.trials("s")
    assert len(trials) == 8
    for column in (
        "trial_id",
        "state",
        "try_number",
        "passed",
        "speedup",
        "final_status",
        "submissions",
        "input_tokens",
        "cost_usd",
        "skill_in_sha256",
        "skill_out_sha256",
        "task_fingerprint",
    ):
        assert column in trials.columns
    assert trials["cost_usd"].sum() == pytest.approx(4.0)
    assert set(trials[trials["arm"] == "solo_tirx"]["final_status"]) == {"mismatch"}
    assert filled.trials("nope").empty
    experiments = filled.experiments()
    assert list(experiments["name"]) == ["s"]
    assert json.loads(experiments["spec_json"][0])["model"] == "fake/model"
    verdicts = filled.table("verdicts", "s")
    assert set(verdicts["role"]) == {"submission", "final"}
    skills = filled.table("skills")
    assert set(skills["role"]) == {"in", "out"}
    assert filled.experiment_names() == ["s"]


def test_attempts_trajectories_and_cells(filled):
    trial_id = "s/fused_add_rmsnorm_h4096_llama31_8b_bf16/cutedsl2tirx_skill/r0"
    attempt = filled.attempt(trial_id)
    assert attempt.skill_in.text == "from solo_cutedsl"
    assert attempt.final.speedup_vs_eager == 2.0
    assert len(attempt.trajectory) == 0  # kept in its own table
    trajectory = filled.trajectory(trial_id)
    assert list(trajectory["text"]) == ["step 0", "step 1", "step 2"]
    trial = filled.trial(trial_id)
    assert trial["state"] == "finished" and trial["try_number"] == 1
    cells = filled.cells("s")
    assert len(cells) == 4
    frame = filled.cells_frame("s")
    assert set(frame["direction"]) == {"cutedsl2tirx", "tirx2cutedsl"}
    c2t = frame[frame["direction"] == "cutedsl2tirx"]
    assert not c2t["base_passed"].astype(bool).any() and c2t["skill_passed"].astype(bool).all()
    # The flat frame and the messages give the same report.
    a = mkb.stats.compute(cells, {"bootstrap_resamples": 20})
    b = mkb.stats.compute(frame, {"bootstrap_resamples": 20})
    assert a.to_json() == b.to_json()
    lift = filled.stats("s", {"bootstrap_resamples": 20}).lift
    overall = lift[(lift["level"] == "overall") & (lift["arm"] == "skill")]
    assert len(overall) == 1


@pytest.mark.parametrize("format", ["jsonl", "csv", "parquet"])
def test_export_every_table(filled, tmp_path, format):
    if format == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / format
    paths = filled.export(out, format)
    assert [p.name for p in paths] == [f"{t}.{format}" for t in TABLES]
    if format == "jsonl":
        rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
        assert len(rows) == 8 and rows[0]["attempt"]["final"]["status"] in ("PASSED", "MISMATCH")
        trials = pd.read_json(out / "trials.jsonl", lines=True)
    elif format == "csv":
        trials = pd.read_csv(out / "trials.csv")
        submissions = pd.read_csv(out / "submissions.csv")
        assert set(submissions["kernel_source"]) == {'x = "a,b"\n'}
    else:
        trials = pd.read_parquet(out / "trials.parquet")
    assert len(trials) == 8
    pd.testing.assert_series_equal(trials["trial_id"], filled.trials()["trial_id"], check_names=False)
    cells = {
        "jsonl": lambda: pd.read_json(out / "cells.jsonl", lines=True),
        "csv": lambda: pd.read_csv(out / "cells.csv"),
        "parquet": lambda: pd.read_parquet(out / "cells.parquet"),
    }[format]()
    assert len(cells) == 4
    assert mkb.stats.compute(cells, {"bootstrap_resamples": 10}).counts["n_resolved"] == 4


def test_export_one_table_of_one_experiment(filled, tmp_path):
    paths = mkb.store.export(filled.path, tmp_path / "x", "csv", tables=["usage"], experiment="s")
    assert [p.name for p in paths] == ["usage.csv"]
    with pytest.raises(mkb.InvalidArgumentError, match="no table 'nope'"):
        filled.export(tmp_path / "y", "csv", tables=["nope"])
    with pytest.raises(mkb.InvalidArgumentError, match="'xlsx' is not one of jsonl, csv, parquet"):
        filled.export(tmp_path / "y", "xlsx")


def test_errors_name_the_file(tmp_path):
    with pytest.raises(mkb.NotFoundError, match="no such store"):
        mkb.Store(tmp_path / "missing.db", create=False)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(mkb.FailedPreconditionError, match="not a MetaKernelBench results store"):
        mkb.Store(other)
    store = mkb.Store(tmp_path / "new.db")
    with pytest.raises(mkb.NotFoundError, match="no experiment 'x'"):
        store.experiment("x")
    with pytest.raises(mkb.NotFoundError, match="no trial"):
        store.attempt("x/y")
    store.check_integrity()


def _not_stores(tmp_path):
    """An empty file, a foreign SQLite database and a text file."""
    empty = tmp_path / "empty.db"
    empty.touch()
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes(x)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
    text = tmp_path / "notes.txt"
    text.write_text("a file that is no database at all, but long enough to look like one\n")
    return [empty, foreign, text]


@pytest.mark.parametrize(
    "command",
    [["stats"], ["stats", "--json"], ["report", "--out", "{out}"], ["export", "--out", "{out}"]],
    ids=["stats", "stats-json", "report", "export"],
)
def test_reads_never_write_a_file_that_is_not_a_store(tmp_path, command):
    from metakernelbench.cli import main

    for path in _not_stores(tmp_path):
        before = path.read_bytes()
        out = tmp_path / f"out-{path.stem}"
        args = [command[0], str(path), *[a.format(out=out) for a in command[1:]]]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(args)
        assert code == 2, (args, err.getvalue())
        # Rich may wrap the long line; the words and the file name are there.
        text = " ".join(err.getvalue().split())
        assert "not a MetaKernelBench results store" in text and path.name in text, text
        assert path.read_bytes() == before, path
        assert not path.with_name(path.name + "-wal").exists()
        assert not path.with_name(path.name + "-shm").exists()
        assert not out.exists()
    with pytest.raises(mkb.FailedPreconditionError, match="an empty file"):
        mkb.Store(tmp_path / "empty.db", read_only=True)


def test_reads_of_an_older_store_leave_it_as_it_was(filled, tmp_path):
    """A store of schema version 1 (blocked trials left pending) is read through a migrated copy
    in memory: mkb stats and export see version 2, the file keeps its bytes."""
    from metakernelbench.cli import main

    path = tmp_path / "old.db"
    with sqlite3.connect(filled.path) as source, sqlite3.connect(path) as target:
        source.backup(target)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE trials SET state = 'pending', error = '' WHERE state = 'blocked'")
        db.execute("PRAGMA user_version = 1")
        db.execute("PRAGMA journal_mode = DELETE")
    before = path.read_bytes()
    assert main(["stats", str(path), "--json", "--resamples", "20"]) == 0
    assert main(["export", str(path), "--out", str(tmp_path / "x"), "--format", "csv"]) == 0
    assert path.read_bytes() == before
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    mkb.Store(path)  # a writing open migrates it
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_narrower_plan_retires_trials_and_the_cells_follow_the_plan(filled, suite):
    exp = ex.Experiment.standard(
        "s", "fake/model", problems=["25"], replicates=1, workload="small", device="cpu"
    )
    plan = exp.plan(filled.path, suite=suite, executor=_attempt)
    assert len(plan.attrs["outside_plan"]) == 4 and all(
        "/fused_add_rmsnorm" in t for t in plan.attrs["outside_plan"]
    )
    result = exp.run(filled.path, executor=_attempt, suite=suite)
    assert sorted(result.retired) == sorted(plan.attrs["outside_plan"])
    assert {c.problem_slug for c in filled.cells("s")} == {"batched_kv_cache_block_copy_remap_uint8"}
    trials = filled.trials("s").set_index("trial_id")
    assert set(trials.loc[result.retired, "state"]) == {"retired"}
    filled.check_integrity()
