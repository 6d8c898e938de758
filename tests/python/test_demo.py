"""`mkb demo`: the whole protocol on three problems fills a store, prints the results and the
statistics, and a second run reuses the finished trials."""

from __future__ import annotations

import pytest

import metakernelbench as mkb
from metakernelbench.cli import demo as demo_cli
from metakernelbench.cli import main


class FakeExecutor:
    def __init__(self):
        self.calls = 0

    def __call__(self, spec):
        self.calls += 1
        ok = spec.arm != "tirx2cutedsl_skill"
        final = {"status": "passed" if ok else "mismatch", "passed": ok}
        if ok:
            final["speedup_vs_eager"] = 1.5 if spec.arm.endswith("_skill") else 1.0
        return {
            "submissions": [{"index": 0, "counted": True, "verdict": final}],
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
