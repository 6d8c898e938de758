"""`mkb demo`: the whole protocol on three problems fills a store, prints the results and the
statistics, and a second run reuses the finished trials."""

from __future__ import annotations

import pytest

import metakernelbench as mkb
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
    monkeypatch.setattr(demo_cli, "demo_executor", lambda suite, store: fake)
    store = tmp_path / "demo.db"
    assert main(["demo", "--store", str(store)]) == 0
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

    assert main(["demo", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "12 trials reused from the store, 0 run now" in out
    assert fake.calls == 12


@pytest.mark.slow
def test_demo_with_the_scripted_model_on_the_cpu_judge(tmp_path, monkeypatch, capsys):
    """The real thing on one of the three problems (the whole demo takes a few minutes)."""
    monkeypatch.setattr(demo_cli, "DEMO_PROBLEMS", ("28",))
    store = tmp_path / "demo.db"
    assert main(["demo", "--store", str(store)]) == 0, capsys.readouterr().err
    assert "4/4 trials done" in capsys.readouterr().out
    s = mkb.Store(store)
    trials = s.trials("demo")
    assert set(trials["state"]) == {"finished"}
    assert (trials["submissions"] > 0).all()
    for row in trials.itertuples():
        assert len(s.trajectory(row.trial_id)) > 0
        if row.arm.endswith("_skill"):
            assert s.attempt(row.trial_id).skill_in.text.strip()
    assert main(["demo", "--store", str(store)]) == 0
    assert "4 trials reused from the store, 0 run now" in capsys.readouterr().out


def test_demo_output_fits_80_columns_without_cutting_names(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(demo_cli, "demo_executor", lambda suite, store: FakeExecutor())
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["demo", "--store", str(tmp_path / "demo.db")]) == 0
    out = capsys.readouterr().out
    # Tables fit (a wider one would be cut at the edge); plain lines are the terminal's to wrap.
    tables = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and max(len(line) for line in tables) <= 80
    assert "…" not in out
    for arm in ("solo_cutedsl", "solo_tirx", "cutedsl2tirx_skill", "tirx2cutedsl_skill"):
        assert f"│ {arm} " in out  # whole, on one line, in the effort table
