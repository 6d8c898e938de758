"""`mkb import upstream-results`: the published harness's per-model results trees
(tests/data/upstream-results, written by tests/data/make_upstream_results.py) into a store, end to
end, then `mkb stats` on it; the mapping of records to attempts; parity of our R@t / S with the
harness's own snapshot; strict errors naming file and field; re-imports."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import upstream
from metakernelbench.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream-results"
GLM = "upstream-glm-5.3"
QWEN = "upstream-qwen3.8-flash"
P02 = "gqa_paged_decode_h5_kv1_d128_ps1_bf16"
P25 = "batched_kv_cache_block_copy_remap_uint8"
P28 = "fused_add_rmsnorm_h4096_llama31_8b_bf16"
GLM_PREFIX = "f0c9d7"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The fixture tree imported once through the CLI: (store path, CLI output)."""
    store = tmp_path_factory.mktemp("upstream") / "up.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["import", "upstream-results", str(DATA), "--store", str(store)])
    assert code == 0, out.getvalue()
    return store, out.getvalue()


@pytest.fixture
def tree(tmp_path):
    """A copy of the glm tree that a test may edit."""
    root = tmp_path / "glm-5.3"
    shutil.copytree(DATA / "glm-5.3", root)
    return root


def record_path(root: Path, problem: str, k: int, arm: str) -> Path:
    return root / "problems" / problem / f"{GLM_PREFIX}_p{problem[:2]}_r{k}_{arm}" / "record.json"


def test_import_stores_one_experiment_per_model_with_every_outcome(imported):
    store_path, out = imported
    assert "upstream-glm-5.3" in out and "upstream-qwen3.8-flash" in out and "next: mkb stats" in out
    store = mkb.Store(store_path)
    assert sorted(store.experiment_names()) == [GLM, QWEN]
    assert store.experiment(GLM).model == "openrouter/z-ai/glm-5.3"
    trials = store.trials(GLM).set_index("trial_id")
    assert len(trials) == 3 * 4 * 2
    state = trials["state"].to_dict()
    # replicates r1, r2 of the harness are 0, 1 here
    assert state[f"{GLM}/{P28}/cutedsl2tirx_skill/r0"] == "skipped"  # its source wrote no SKILL.md
    assert state[f"{GLM}/{P25}/solo_tirx/r1"] == "failed"  # the harness recorded an error
    assert "RateLimitError" in trials.loc[f"{GLM}/{P25}/solo_tirx/r1", "error"]
    assert "record.json: error:" in trials.loc[f"{GLM}/{P25}/solo_tirx/r1", "error"]
    assert state[f"{GLM}/{P25}/tirx2cutedsl_skill/r1"] == "blocked"  # its source failed: never ran
    assert "failed" in trials.loc[f"{GLM}/{P25}/tirx2cutedsl_skill/r1", "error"]
    assert state[f"{GLM}/{P28}/tirx2cutedsl_skill/r1"] == "failed"  # folder without record.json
    assert "no record.json" in trials.loc[f"{GLM}/{P28}/tirx2cutedsl_skill/r1", "error"]
    finished = [t for t, s in state.items() if s == "finished"]
    assert len(finished) == 20
    assert set(store.trials(QWEN)["state"]) == {"finished"}


def test_records_become_attempts_field_by_field(imported):
    store = mkb.Store(imported[0])
    raw = json.loads(record_path(DATA / "glm-5.3", "02_" + P02, 2, "cutedsl2tirx_skill").read_text())
    attempt = store.attempt(f"{GLM}/{P02}/cutedsl2tirx_skill/r1")
    assert attempt.final.passed and math.isclose(attempt.final.speedup_vs_eager, 2.30)
    assert attempt.stop_reason == "time_budget"
    assert attempt.usage.input_tokens == raw["usage"]["n_input_tokens"]
    assert attempt.usage.cached_input_tokens == raw["usage"]["n_cache_tokens"]
    assert attempt.usage.output_tokens == raw["usage"]["n_output_tokens"]
    assert math.isclose(attempt.usage.cost_usd, raw["usage"]["cost_usd"])
    assert math.isclose(attempt.usage.agent_seconds, raw["usage"]["agent_sec"])
    assert attempt.started_unix > 0 and attempt.finished_unix - attempt.started_unix == pytest.approx(2470)
    assert attempt.workspace_dir.endswith(f"{GLM_PREFIX}_p02_r2_cutedsl2tirx_skill")
    # the skill came over from the attachment (the source's artifacts hold no SKILL.md), header removed
    assert attempt.skill_in.text.strip() == "From the attachment."
    # provenance: the record verbatim, with the harness's fingerprints
    note = store.trajectory(f"{GLM}/{P02}/cutedsl2tirx_skill/r1").iloc[0]
    assert note["kind"] == "note" and "record.json" in note["text"]
    assert json.loads(note["json"])["record"]["stamps"] == raw["stamps"]

    failed_kernel = store.attempt(f"{GLM}/{P02}/solo_tirx/r0")
    assert not failed_kernel.final.passed and failed_kernel.final.imported and not failed_kernel.final.correct
    assert "exceeds the allowance" in failed_kernel.final.message
    not_imported = store.attempt(f"{GLM}/{P28}/tirx2cutedsl_skill/r0")
    assert not not_imported.final.imported
    with_submissions = store.attempt(f"{GLM}/{P02}/cutedsl2tirx_skill/r0")
    assert len(with_submissions.submissions) == 2 and with_submissions.best_submission == 1
    solo = store.attempt(f"{GLM}/{P25}/solo_cutedsl/r0")
    assert solo.skill_out.text.startswith("A block copy is bandwidth bound")
    assert store.attempt(f"{GLM}/{P25}/cutedsl2tirx_skill/r0").skill_in.text == solo.skill_out.text
    missing_cost = store.attempt(f"{GLM}/{P25}/cutedsl2tirx_skill/r1")
    assert missing_cost.usage.cost_usd == 0 and missing_cost.usage.input_tokens > 0


def test_our_aggregates_equal_the_harness_snapshot(imported):
    """R@t and S of every split, computed by our C++ core from the imported store, against the
    harness's own results.json (computed by its results.py rules)."""
    store = mkb.Store(imported[0])
    for experiment, folder in ((GLM, "glm-5.3"), (QWEN, "qwen3.8-flash")):
        frame = store.stats(experiment, {"bootstrap_resamples": 1}, levels=["overall"]).aggregates
        frame = frame[frame["model"] == "*"]
        snapshot = json.loads((DATA / folder / "results.json").read_text())["overall"]
        groups = [("all", "all", snapshot), ("with_skill", "with_skill", snapshot["with_skill"])]
        groups += [("by_source_verdict", f"source_{k}", v) for k, v in snapshot["by_source_verdict"].items()]
        groups += [("by_direction", k, v) for k, v in snapshot["by_direction"].items()]
        groups += [("by_family", k, v) for k, v in snapshot["by_category"].items()]
        checked = 0
        for split, group, expected in groups:
            rows = frame[(frame["split"] == split) & (frame["group"] == group)].set_index("arm")
            if expected["base"] is None:
                assert rows.empty or int(rows.loc["base", "n"]) == 0
                continue
            for arm in ("base", "skill", "lift"):
                for key, value in expected[arm].items():
                    assert rows.loc[arm, key] == pytest.approx(value, abs=1e-12), (
                        experiment,
                        split,
                        group,
                        arm,
                        key,
                    )
                    checked += 1
        assert checked >= 100
        assert (
            int(frame[(frame["split"] == "all") & (frame["arm"] == "base")]["n"].iloc[0])
            == snapshot["n_resolved"]
        )


def test_usage_per_arm_counts_the_trials_that_ran_as_the_harness_does(imported):
    """Usage per arm over the attempts that ran, the harness's n_trials: a conditioned trial whose
    source failed (blocked: it never ran) and a trial without a record are not among them, so
    they do not dilute the means (the published bug: 85 attempts counted instead of 77)."""
    store = mkb.Store(imported[0])
    for experiment, folder in ((GLM, "glm-5.3"), (QWEN, "qwen3.8-flash")):
        report = store.stats(experiment, {"bootstrap_resamples": 1}, levels=["overall"])
        usage = report.usage[report.usage["model"] == "*"].set_index("arm")
        harness = json.loads((DATA / folder / "results.json").read_text())["overall"]["usage"]
        for arm, expected in harness.items():
            row = usage.loc[arm]
            assert row.attempts == expected["n_trials"], (experiment, arm)
            assert row.input_tokens == expected["n_input_tokens"], (experiment, arm)
            assert row.cached_input_tokens == expected["n_cache_tokens"], (experiment, arm)
            assert row.output_tokens == expected["n_output_tokens"], (experiment, arm)
            assert row.mean_agent_seconds == pytest.approx(expected["agent_sec"], rel=1e-12)
            if expected["cost_usd"] is not None:  # the harness's sum is null when a cost is
                assert row.cost_usd == pytest.approx(expected["cost_usd"], rel=1e-12)
                assert row.mean_cost_usd == pytest.approx(expected["cost_usd"] / expected["n_trials"])
    glm = store.stats(GLM, {"bootstrap_resamples": 1}, levels=["overall"]).usage
    skill = glm[(glm["model"] == "*") & (glm["arm"] == "tirx2cutedsl_skill")].iloc[0]
    # 6 cell-replicates: 4 ran, 1 blocked (its source failed), 1 without a record.
    assert (skill.attempts, skill.not_run, skill.blocked, skill.skipped) == (4, 2, 1, 0)
    assert skill.mean_cost_usd == pytest.approx(skill.cost_usd / 4)
    assert skill.mean_cost_usd > skill.cost_usd / 6  # not diluted by the trials that never ran


def test_cell_replicates_coverage_and_per_cell_rates_match_the_harness(imported):
    """n_cell_replicates, n_resolved, source_coverage and skill_coverage per group, and R@t / S
    per cell (problem x direction), against the harness's results.json."""
    store = mkb.Store(imported[0])
    for experiment, folder in ((GLM, "glm-5.3"), (QWEN, "qwen3.8-flash")):
        frame = store.stats(experiment, {"bootstrap_resamples": 1}, levels=["overall"]).aggregates
        frame = frame[frame["model"] == "*"]
        snapshot = json.loads((DATA / folder / "results.json").read_text())
        groups = [("all", "all", snapshot["overall"])]
        groups += [("by_direction", k, v) for k, v in snapshot["overall"]["by_direction"].items()]
        groups += [("by_family", k, v) for k, v in snapshot["overall"]["by_category"].items()]
        for cell in snapshot["cells"]:
            problem = cell["cell"]["problem"].split("_", 1)[1]  # our slug: the name without NN_
            groups.append(("by_cell", f"{problem}/{cell['cell']['direction']}", cell))
        checked = 0
        for split, group, expected in groups:
            rows = frame[(frame["split"] == split) & (frame["group"] == group)].set_index("arm")
            assert not rows.empty, (experiment, split, group)
            base = rows.loc["base"]
            assert base.n_cell_replicates == expected["n_cell_replicates"], (experiment, group)
            assert base.n == expected["n_resolved"], (experiment, group)
            for key in ("source_coverage", "skill_coverage"):
                if expected[key] is None:
                    assert math.isnan(base[key])
                else:
                    assert base[key] == pytest.approx(expected[key], abs=1e-12), (experiment, group, key)
            if split == "by_cell" and expected["base"] is not None:
                for arm in ("base", "skill", "lift"):
                    for key, value in expected[arm].items():
                        assert rows.loc[arm, key] == pytest.approx(value, abs=1e-12), (group, arm, key)
                        checked += 1
        assert checked >= 36
    glm = store.stats(GLM, {"bootstrap_resamples": 1}, levels=["overall"]).aggregates
    overall = glm[(glm["model"] == "*") & (glm["split"] == "all")].iloc[0]
    assert (overall.n_cell_replicates, overall.n) == (12, 9)


def test_a_reimport_replaces_the_experiment_with_the_newer_tree(tmp_path, tree, suite):
    """A newer tree with fewer replicates, imported over an older import: the cells are those of
    the newer tree's plan (the published bug: the older trials stayed in every statistic, n_cells
    192 instead of 128), and the older trials are archived, not lost."""
    store = tmp_path / "r.db"
    upstream.import_model_results(tree, store, suite=suite)
    older = mkb.Store(store).stats(GLM, {"bootstrap_resamples": 1}, levels=["overall"])
    assert older.counts["n_cells"] == 3 * 2 * 2
    for problem in (tree / "problems").iterdir():  # the newer tree: replicate 1 only
        for folder in problem.glob("*_r2_*"):
            shutil.rmtree(folder)
        for skill in problem.glob("skills/r2_*"):
            skill.unlink()
    result = upstream.import_model_results(tree, store, suite=suite)
    assert result.replicates == 1
    s = mkb.Store(store)
    newer = s.stats(GLM, {"bootstrap_resamples": 1}, levels=["overall"])
    assert newer.counts["n_cells"] == 3 * 2 * 1
    assert set(newer.comparisons["replicate"]) == {0}
    trials = s.trials(GLM).set_index("trial_id")
    assert (trials.loc[trials.index.str.endswith("/r1"), "state"] == "retired").all()
    archived = s.archived_tries(GLM)
    assert set(archived[archived["trial_id"].str.endswith("/r1")]["reason"]) == {"outside_plan"}
    s.check_integrity()


def test_mkb_stats_on_the_imported_store(imported, capsys):
    store = str(imported[0])
    assert main(["stats", store, "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "openrouter/z-ai/glm-5.3 · tirx2cutedsl" in out and "Transfer by relative standing" in out
    assert main(["stats", store, "--json", "--resamples", "300", "--by", "model,direction"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["levels"] == ["overall", "model,direction"]
    assert {row["model"] for row in document["lift"]} == {
        "*",
        "openrouter/z-ai/glm-5.3",
        "dashscope/qwen3.8-flash",
    }
    assert document["n_resolved"] == 15


def test_importing_again_reuses_and_a_changed_tree_replaces(tmp_path, tree, suite):
    store = tmp_path / "r.db"
    first = upstream.import_model_results(tree, store, suite=suite)
    assert first.stored["finished"] == 20 and first.stored["reused"] == 0
    again = upstream.import_model_results(tree, store, suite=suite)
    assert again.stored["reused"] == 21 and again.stored["finished"] == 0  # 20 finished + 1 skipped
    path = record_path(tree, "25_" + P25, 1, "solo_cutedsl")
    record = json.loads(path.read_text())
    record["rewards"]["speedup_vs_eager"] = 5.0
    path.write_text(json.dumps(record))
    upstream.import_model_results(tree, store, suite=suite)
    s = mkb.Store(store)
    assert s.attempt(f"{GLM}/{P25}/solo_cutedsl/r0").final.speedup_vs_eager == 5.0
    archived = s.archived_tries(GLM)
    assert set(archived["reason"]) >= {"stale"}


def test_optional_files_and_fields_may_be_missing(tmp_path, tree, suite):
    (tree / "results.json").unlink()
    for verdict in tree.rglob("verdict.json"):
        verdict.unlink()
    path = record_path(tree, "02_" + P02, 1, "solo_cutedsl")
    path.write_text(json.dumps({"rewards": {"passed": 1.0, "speedup_vs_eager": 1.5}}))
    result = upstream.import_model_results(tree, tmp_path / "r.db", suite=suite)
    assert result.stored["finished"] == 20
    attempt = mkb.Store(tmp_path / "r.db").attempt(f"{GLM}/{P02}/solo_cutedsl/r0")
    assert attempt.final.passed and attempt.usage is None and not attempt.stop_reason


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (lambda r: r.pop("rewards"), "rewards", "missing"),
        (lambda r: r["rewards"].update(passed="yes"), "rewards.passed", "expected a finite number"),
        (lambda r: r["usage"].update(n_input_tokens=-5), "usage.n_input_tokens", ">= 0"),
        (lambda r: r["usage"].update(n_output_tokens=1.5), "usage.n_output_tokens", "expected an integer"),
        (lambda r: r.update(timed_out="no"), "timed_out", "expected true or false"),
        (
            lambda r: r["rewards"].pop("speedup_vs_eager"),
            "rewards.speedup_vs_eager",
            "missing for a passed trial",
        ),
        (lambda r: r.update(skipped="why"), "skipped", "only conditioned arms are skipped"),
        (lambda r: r.update(stamps=[]), "stamps", "expected an object"),
    ],
)
def test_malformed_records_name_the_file_and_the_field(tree, edit, field, words):
    path = record_path(tree, "02_" + P02, 1, "solo_cutedsl")
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))
    with pytest.raises(mkb.InvalidArgumentError) as error:
        upstream.read_model_results(tree)
    assert str(error.value).startswith(f"{path}: {field}: ") and words in str(error.value)


def test_malformed_trees_name_what_is_wrong(tmp_path, tree, capsys):
    path = record_path(tree, "02_" + P02, 1, "solo_cutedsl")
    path.write_text("{not json")
    with pytest.raises(mkb.InvalidArgumentError, match=r"record\.json: not valid JSON"):
        upstream.read_model_results(tree)
    path.write_text(json.dumps({"rewards": {}}))

    odd = path.parent.with_name(f"{GLM_PREFIX}_p02_r1_solo_triton")
    odd.mkdir()
    with pytest.raises(mkb.InvalidArgumentError, match="unknown arm 'solo_triton'"):
        upstream.read_model_results(tree)
    odd.rmdir()

    identity = json.loads((tree / "store.json").read_text())
    (tree / "store.json").write_text(json.dumps({**identity, "prefix": "abcdef"}))
    with pytest.raises(mkb.InvalidArgumentError, match=r"store\.json: prefix: 'abcdef' is not sha256"):
        upstream.read_model_results(tree)
    (tree / "store.json").write_text(json.dumps(identity))

    # through the CLI: one line, exit 2
    (tree / "problems" / "not-a-problem").mkdir()
    assert main(["import", "upstream-results", str(tree), "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "not-a-problem" in err and "NN_<problem>" in err
    assert not (tmp_path / "r.db").exists() or not mkb.Store(tmp_path / "r.db").experiment_names()

    (tmp_path / "empty").mkdir()
    with pytest.raises(mkb.NotFoundError, match="neither it nor a sub-folder holds store.json"):
        upstream.model_trees(tmp_path / "empty")


def test_an_import_is_all_or_nothing(tmp_path, suite, capsys):
    """results/ with a good tree (glm, imported first) and a malformed one (qwen): nothing is
    stored, and the error names the bad file."""
    results = tmp_path / "results"
    shutil.copytree(DATA, results)
    (bad,) = (results / "qwen3.8-flash" / "problems").glob("25_*/*_r1_solo_tirx/record.json")
    record = json.loads(bad.read_text())
    record["usage"]["n_output_tokens"] = -1
    bad.write_text(json.dumps(record))
    store = tmp_path / "r.db"
    with pytest.raises(mkb.InvalidArgumentError, match=r"record\.json: usage\.n_output_tokens"):
        upstream.import_results(results, store, suite=suite)
    assert not store.exists()
    assert main(["import", "upstream-results", str(results), "--store", str(store)]) == 2
    assert str(bad) in capsys.readouterr().err
    assert not store.exists()
    # Into an existing store: it is left as it was.
    upstream.import_model_results(results / "glm-5.3", store, suite=suite)
    before = mkb.Store(store).trials()
    assert main(["import", "upstream-results", str(results), "--store", str(store)]) == 2
    assert mkb.Store(store).trials().equals(before)
    assert mkb.Store(store).experiment_names() == [GLM]


def test_a_skip_that_contradicts_the_sources_skill_is_an_error(tmp_path, tree, suite):
    source_dir = record_path(tree, "28_" + P28, 1, "solo_cutedsl").parent
    (source_dir / "artifacts" / "app").mkdir(parents=True)
    (source_dir / "artifacts" / "app" / "SKILL.md").write_text("something after all\n")
    with pytest.raises(mkb.InvalidArgumentError, match="skipped: recorded as skipped, but its source"):
        upstream.import_model_results(tree, tmp_path / "r.db", suite=suite)


def test_problems_must_be_in_the_suite_and_be_the_same(tmp_path, tree, suite, capsys):
    extra = tree / "problems" / "99_not_in_the_suite_bf16"
    shutil.copytree(tree / "problems" / ("02_" + P02), extra)
    for trial in list(extra.iterdir()):
        if trial.name != "skills":
            trial.rename(extra / trial.name.replace("_p02_", "_p99_"))
    with pytest.raises(
        mkb.FailedPreconditionError, match="99_not_in_the_suite_bf16.*--skip-missing-problems"
    ):
        upstream.import_model_results(tree, tmp_path / "r.db", suite=suite)
    store = tmp_path / "r.db"
    assert (
        main(["import", "upstream-results", str(tree), "--store", str(store), "--skip-missing-problems"]) == 0
    )
    assert "left out 1 problems not in the suite: 99_not_in_the_suite_bf16" in capsys.readouterr().out
    assert len(mkb.Store(store).trials(GLM)) == 24

    snapshot = json.loads((tree / "results.json").read_text())
    snapshot["cells"][0]["cell"]["category"] = "moe"
    (tree / "results.json").write_text(json.dumps(snapshot))
    with pytest.raises(
        mkb.InvalidArgumentError, match=r"results\.json: cells\[1\]\.cell\.category: 'attention', but 'moe'"
    ):
        upstream.read_model_results(tree)
    snapshot["cells"][1]["cell"]["category"] = "moe"
    (tree / "results.json").write_text(json.dumps(snapshot))
    with pytest.raises(
        mkb.InvalidArgumentError, match="category 'moe' upstream but 'attention' in the suite"
    ):
        upstream.import_model_results(tree, tmp_path / "other.db", suite=suite, skip_missing_problems=True)
