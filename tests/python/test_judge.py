"""mkb.evaluate / mkb.report: the judge's Python API over the C++ mkb::Judge."""

import os
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import _core

KERNELS = Path(__file__).resolve().parents[1] / "adversarial" / "kernels"
QUICK = {"timing_draws": 4, "warmup_calls": 1, "recheck_draws": 1}


def _host_children() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if ppid == os.getpid() and b"metakernelbench.judge.host" in cmdline:
            pids.append(int(entry))
    return pids


def test_an_honest_kernel_passes_and_the_verdict_is_complete(suite):
    verdict = mkb.evaluate(
        suite.find(28), "cutedsl", path=KERNELS / "honest_rmsnorm.py", device="cpu", config=QUICK
    )
    assert verdict.status == "passed" and verdict.passed and verdict.correct
    assert verdict.correct_draws == verdict.total_draws == 5
    assert verdict.speedup_vs_eager > 0
    assert verdict.kernel_parity.samples == 4 and verdict.kernel_parity.method == "host_clock"
    assert verdict.environment.device == "cpu" and verdict.environment.torch_version
    assert verdict.phase_times.total_s > 0
    assert len(verdict.kernel_sha256) == 64 and verdict.problem_fingerprint == suite.find(28).fingerprint
    text = mkb.report(verdict)
    assert text.startswith("verdict: passed") and "seed" not in text.lower()


def test_a_warm_host_waits_for_the_next_evaluation(suite):
    mkb.evaluate(suite.find(25), "cutedsl", path=KERNELS / "honest_block_copy.py", device="cpu", config=QUICK)
    assert len(_host_children()) == 1  # the spare, importing torch or waiting on its stdin
    verdict = mkb.evaluate(
        suite.find(25), "cutedsl", path=KERNELS / "honest_block_copy.py", device="cpu", config=QUICK
    )
    assert verdict.passed
    assert len(_host_children()) == 1


def test_judge_errors_are_exceptions_not_verdicts(suite):
    with pytest.raises(mkb.InvalidArgumentError, match="exactly one of source or path"):
        mkb.evaluate(28, "cutedsl", "x = 1", path="kernel.py")
    with pytest.raises(mkb.InvalidArgumentError, match="device"):
        mkb.evaluate(28, "cutedsl", "x = 1", device="tpu")
    with pytest.raises(mkb.InvalidArgumentError, match="dsl: .cuda. is not one of cutedsl, tirx"):
        mkb.evaluate(28, "cuda", "x = 1")
    judge = _core.Judge("/nonexistent/python3", [])
    with pytest.raises(mkb.FailedPreconditionError, match="cannot start the judge host"):
        judge.evaluate(
            {
                "problem_dir": str(suite.find(28).directory),
                "kernel_source": "x = 1",
                "dsl": "cutedsl",
                "device": "cpu",
            }
        )


def test_a_failing_kernel_is_a_verdict(suite):
    verdict = mkb.evaluate(28, "tirx", path=KERNELS / "zeros.py", device="cpu", config=QUICK)
    assert verdict.status == "mismatch" and not verdict.passed
    assert verdict.first_mismatch.output_path == "out"
    assert verdict.first_mismatch.factor_over > 1
    assert verdict.speedup_vs_eager is None


def test_reported_times_are_bounded_by_the_hosts_clock():
    """The worker's reports (C++ AcceptReportedTimes through the binding): honest ones stand as
    reported, even with more time outside the clock than the calibration's no-op; a report
    longer than its round trip, or most of each call spent outside the clock, fails."""
    from metakernelbench import _core

    calibration = [1.2] * 27 + [1.7] * 3
    rtt = [5.0 + 0.01 * (i % 5) for i in range(50)]
    honest = [t - 2.0 for t in rtt]
    ok = _core.accept_reported_times(honest, rtt, calibration, None, True)
    assert ok["finding"] is None and ok["over_round_trip"] == 0 and ok["accepted_ms"] == honest
    lazy = _core.accept_reported_times([2.0] * 50, [8.0] * 50, calibration, None, True)
    assert lazy["finding"]["code"] == "timing.inconsistent"
    assert "outside the timed window" in lazy["finding"]["message"]
    longer = _core.accept_reported_times([0.6], [0.5], calibration, None, True)
    assert longer["over_round_trip"] == 1 and longer["accepted_ms"] == [0.5]
    assert "longer than the host's round trip" in longer["finding"]["message"]


def test_a_refusal_in_the_judges_own_calibration_is_shown_not_blamed_on_the_kernel():
    """The host's calibration runs before kernel.py exists: an audit refusal there is the judge's
    fault, reported as a warning (it was dropped, which hid a judge bug on the H200)."""
    from types import SimpleNamespace

    from metakernelbench import _core
    from metakernelbench.judge import host

    problem = mkb.load_suite().find(28)
    builder = _core.VerdictBuilder(problem.message, "cutedsl", "small", None)
    refusal = SimpleNamespace(message="the worker refused 'ctypes.dlopen': ...", evidence="ctypes.dlopen")
    replies = iter([[refusal], [], [refusal]])

    def request(op, inputs, output_metas):
        reply = SimpleNamespace(judge_error="", ok=True, seconds=0.001, findings=next(replies))
        return reply, [], None, 0.002

    fake = SimpleNamespace(
        plan=SimpleNamespace(warmup_seeds=[1], calibration_calls=3),
        make=lambda seed: problem.make_inputs("small", seed=seed),
        module=problem.module,
        builder=builder,
    )
    host.Evaluation._calibrate(fake, SimpleNamespace(request=request))
    assert len(fake.calibration_gaps) == 3
    assert builder.can_continue() and not builder.has_violation()
    verdict = builder.finish()
    shown = [f for f in verdict.findings if f.code == "judge.calibration_refused"]
    assert len(shown) == 1 and "refused 2 event(s) of the judge's own calibration" in shown[0].message
