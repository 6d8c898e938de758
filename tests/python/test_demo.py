"""`mkb demo`: the whole protocol on three problems fills a store, prints the results and the
statistics, and a second run reuses the finished trials."""

from __future__ import annotations

import metakernelbench as mkb
import pytest
from metakernelbench.cli import demo as demo_cli
from metakernelbench.cli import main


class FakeExecutor:
    """As the scripted model behaves: a solo submits a wrong kernel, then the right one; a
    conditioned arm (but tirx2cutedsl, which fails) submits the right one at once."""

    def __init__(self):
        self.calls = 0

    def __call__(self, spec):
        self.calls += 1
        ok = spec.arm != "tirx2cutedsl_skill"
        final = {"status": "passed" if ok else "mismatch", "passed": ok}
        if ok:
            final["speedup_vs_eager"] = 1.5 if spec.arm.endswith("_skill") else 1.0
        wrong = {"status": "mismatch", "passed": False}
        verdicts = [final] if spec.arm.endswith("_skill") else [wrong, final]
        return {
            "submissions": [{"index": i, "counted": True, "verdict": v} for i, v in enumerate(verdicts)]
            + [{"index": len(verdicts), "counted": False, "verdict": {"status": "invalid_submission"}}],
            "final": final,
            "skill_out": {"text": f"what {spec.arm} learned"},
        }


def test_demo_runs_the_protocol_into_a_store_then_reuses_it(tmp_path, monkeypatch, capsys):
    fake = FakeExecutor()
    monkeypatch.setattr(demo_cli, "demo_executor", lambda suite, store, *_: fake)
    store = tmp_path / "demo.db"
    assert main(["demo", "--device", "cpu", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "not an LLM" in out
    assert "12/12 trials done" in out and "0 trials reused" in out
    assert "final regrade per trial" in out and "paired lift" in out
    assert fake.calls == 12
    # What the script is built to show: per arm, counted submissions and first-try passes.
    flat = " ".join(out.split())
    assert "counted submissions and first-try passes per arm" in flat
    assert "┃ counted ┃ per attempt ┃ first try" in flat
    assert "solo_cutedsl │ 3 │ 6 │ 2.0 │ 0 of 3" in flat
    assert "cutedsl2tirx_skill │ 3 │ 3 │ 1.0 │ 3 of 3" in flat
    assert "tirx2cutedsl_skill │ 3 │ 3 │ 1.0 │ 0 of 3" in flat  # it failed: not a first-try pass
    assert (
        "skill against solo: 1.0 counted submissions per attempt against 2.0; passed on the first "
        "counted submission 3 of 6 against 0 of 6" in flat
    )
    # Its speedups are labelled as the CPU judge's timing noise.
    assert flat.count("timing noise") >= 3 and "not an effect" in flat
    trials = mkb.Store(store).trials("demo")
    assert len(trials) == 12 and set(trials["state"]) == {"finished"}
    assert set(trials["problem_number"]) == {2, 25, 28}

    assert main(["demo", "--device", "cpu", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "12 trials reused from the store, 0 run now" in out
    assert fake.calls == 12


@pytest.mark.slow
def test_demo_with_the_scripted_model_on_the_cpu_judge(tmp_path, monkeypatch, capsys):
    """The real thing on one of the three problems (the whole demo takes a few minutes)."""
    monkeypatch.setattr(demo_cli, "DEMO_PROBLEMS", ("28",))
    store = tmp_path / "demo.db"
    assert main(["demo", "--device", "cpu", "--store", str(store)]) == 0, capsys.readouterr().err
    assert "4/4 trials done" in capsys.readouterr().out
    s = mkb.Store(store)
    trials = s.trials("demo")
    assert set(trials["state"]) == {"finished"}
    assert (trials["submissions"] > 0).all()
    for row in trials.itertuples():
        assert len(s.trajectory(row.trial_id)) > 0
        if row.arm.endswith("_skill"):
            assert s.attempt(row.trial_id).skill_in.text.strip()
    assert main(["demo", "--device", "cpu", "--store", str(store)]) == 0
    assert "4 trials reused from the store, 0 run now" in capsys.readouterr().out


def test_demo_output_fits_80_columns_without_cutting_names(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "demo_executor", lambda suite, store, *_: FakeExecutor())
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["demo", "--device", "cpu", "--store", str(tmp_path / "demo.db")]) == 0
    out = capsys.readouterr().out
    # Tables fit (a wider one would be cut at the edge); plain lines are the terminal's to wrap.
    tables = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and max(len(line) for line in tables) <= 80
    assert "…" not in out
    for arm in ("solo_cutedsl", "solo_tirx", "cutedsl2tirx_skill", "tirx2cutedsl_skill"):
        assert f"│ {arm} " in out  # whole, on one line, in the effort table


def test_the_gpu_demo_runs_the_dsl_script_on_the_problems_with_solutions(tmp_path, monkeypatch, capsys):
    """`mkb demo --device cuda` (here with a stand-in executor and the GPU check passed): the four
    arms on every problem with shipped solutions in both DSLs, the DSL script's model, full
    workloads on CUDA, the effort line; no CPU-noise labels."""
    from metakernelbench.cli import run as run_cli

    suite = mkb.load_suite()
    problems = demo_cli.gpu_demo_problems(suite)
    assert len(problems) >= 6 and all(
        (p.directory / "solutions" / "cutedsl.py").is_file() for p in suite if p.slug in problems
    )
    fake = FakeExecutor()
    seen = {}

    def executor(suite_, store, device, gpus):
        seen.update(device=device, gpus=gpus)
        return fake

    monkeypatch.setattr(demo_cli, "demo_executor", executor)
    monkeypatch.setattr(run_cli, "gpu_visible", lambda: True)
    store = tmp_path / "gpu-demo.db"
    assert main(["demo", "--device", "cuda", "--gpus", "0", "--store", str(store)]) == 0
    assert seen == {"device": "cuda", "gpus": "0"}
    out = " ".join(capsys.readouterr().out.split())
    assert "scripted/demo-dsl" in out and "not an LLM" in out and "deliberate bug" in out
    assert "skill against solo:" in out
    assert "CPU judge are timing noise" not in out and "CPU timing noise" not in out
    spec = mkb.Store(store, read_only=True).experiment("demo-dsl")
    assert spec.model == "scripted/demo-dsl" and spec.workload == "full" and spec.device == "cuda"
    assert fake.calls == 4 * len(problems)


def test_the_gpu_demo_fails_fast_without_a_gpu(tmp_path, monkeypatch, capsys):
    from metakernelbench.cli import run as run_cli

    monkeypatch.setattr(run_cli, "gpu_visible", lambda: False)
    store = tmp_path / "gpu-demo.db"
    assert main(["demo", "--device", "cuda", "--store", str(store)]) == 2
    assert "no GPU is visible" in capsys.readouterr().err
    assert not store.exists() and not (tmp_path / "gpu-demo-workspaces").exists()


def test_demo_problems_narrow_either_demo_and_a_problem_outside_it_is_named():
    suite = mkb.load_suite()
    assert demo_cli.demo_experiment(2, "cpu", suite, only=["28"]).problems == ["28"]
    gpu = demo_cli.demo_experiment(2, "cuda", suite, only=["28", "36"]).problems
    assert gpu == [suite.find("28").slug, suite.find("36").slug]
    with pytest.raises(mkb.InvalidArgumentError, match=r"--problems 01: none of the demo's problems"):
        demo_cli.demo_experiment(2, "cpu", suite, only=["01"])


@pytest.mark.gpu
def test_the_gpu_demo_on_one_problem_shows_transfer_with_dsl_kernels(tmp_path):
    """On a GPU with both DSL toolchains: problem 28's four arms with scripted/demo-dsl, judged
    for real; each solo's first (deliberately wrong) kernel fails, then the shipped solution
    passes; each skill arm passes with its one submission."""
    from metakernelbench import toolchains

    if not all(toolchains.python_path(d) for d in toolchains.DSLS):
        pytest.skip("both DSL toolchains are needed (mkb dsl install)")
    suite = mkb.load_suite()
    experiment = demo_cli.demo_experiment(2, "cuda", suite, only=["28"])
    store = tmp_path / "gpu-demo.db"
    result = experiment.run(store, executor=demo_cli.demo_executor(suite, store, "cuda"))
    assert result.complete, result.failed
    s = mkb.Store(store, read_only=True)
    trials = s.trials("demo-dsl").set_index("arm")
    assert set(trials["passed"]) == {1}
    subs = s.submissions("demo-dsl")
    counted = subs[subs["counted"] == 1].groupby("trial_id").size()
    expected_counts = {"solo_cutedsl": 2, "solo_tirx": 2, "cutedsl2tirx_skill": 1, "tirx2cutedsl_skill": 1}
    for arm, expected in expected_counts.items():
        assert counted[trials.loc[arm, "trial_id"]] == expected, arm
