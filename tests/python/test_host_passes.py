"""The judge host's GPU-only steps, driven on the CPU with a faked worker and GPU tools: the
strict pass's two series as the C++ plan orders them, the launch rule and the knockout decided in
C++, and the finer step times. CI has no GPU: without these, a slip in the host's glue would
first show on the H200."""

from pathlib import Path
from types import SimpleNamespace

import metakernelbench as mkb
import pytest
from metakernelbench import _core
from metakernelbench.judge import host, values

SMALL = {"timing_draws": 10, "warmup_calls": 1, "recheck_draws": 1, "max_timing_draws": 30}


def _launches(**counts):
    return _core.message("LaunchCounts", {"monitored": True, **counts})


def _trace(span_ms: float):
    return _core.message(
        "CallTrace",
        {
            "method": "cupti",
            "span_ms": span_ms,
            "kernel_sum_ms": span_ms * 0.9,
            "records": [
                {
                    "kind": "KERNEL",
                    "name": "kernel_cutlass_rmsnorm",
                    "start_ns": 0,
                    "end_ns": int(span_ms * 1e6),
                    "origin": "dsl",
                }
            ],
        },
    )


def _cpu(kernel_ms: float, main_ms: float, other_ms: float) -> dict:
    """A call's CPU times as Session.last_cpu_ms holds them (ms)."""
    return {"kernel_thread": kernel_ms, "main_thread": main_ms, "other_threads": other_ms}


def _evaluation(problem, config: dict, require_dsl: bool = True):
    """An Evaluation of problem on a "GPU" plan whose worker and GPU tools are fakes."""
    ev = host.Evaluation.__new__(host.Evaluation)
    ev.problem = problem.message
    ev.config = _core.judge_config({**config, "policy": {"require_dsl": require_dsl}})
    ev.device = "cpu"  # tensors on the CPU; the plan below is a GPU's
    ev.workload = "small"
    ev.request = SimpleNamespace(dsl="cutedsl")
    ev.builder = _core.VerdictBuilder(problem.message, "cutedsl", "small", ev.config)
    ev.plan = _core.MeasurementPlan(ev.config, True)
    ev.policy = ev.config.policy
    ev.require_dsl = ev.plan.require_dsl
    ev.module = problem.module
    ev.steps, ev.times = {}, {}
    ev.clocks = None
    ev.calibration_gaps = [0.1] * 30
    # The worker's CPU time per no-op call (ms; the kernel thread's outside its clock).
    ev.calibration_cpu = {
        "kernel_thread": [0.02] * 30,
        "main_thread": [2.0] * 30,
        "other_threads": [0.0] * 30,
    }
    # As the calibration leaves it: the structure of the reference's outputs.
    ev.timed_structure = values.value_node(problem.module.reference(*problem.make_inputs("small", seed=0)))
    ev.in_place = host._in_place_flags(problem.message)
    ev._call_clock = None
    ev._physical_floor = lambda: 0.0
    ev.make = lambda seed: problem.make_inputs("small", seed=seed % 1000)
    return ev


def test_the_strict_pass_replays_the_eager_seeds_and_the_kernel_draws_on_while_noisy(suite):
    problem = suite.find(28)
    ev = _evaluation(problem, SMALL)
    kernel_seeds: list[int] = []
    ev._published_call = lambda fn, inputs: 1.0
    made = ev.make
    made_for: list[int] = []  # the seed of every draw, in order

    def make(seed):
        made_for.append(seed)
        return made(seed)

    ev.make = make
    ev._gpu_tools = lambda: SimpleNamespace(traced=lambda fn: (fn(), _trace(1.0))[1])
    host.Evaluation._eager_passes(ev)
    eager_seeds = made_for[len(ev.plan.warmup_seeds) + len(ev.plan.timing_seeds) :]
    assert len(ev.eager_strict) == len(eager_seeds) == 10  # steady: done at timing_draws
    assert ev.steps["eager.strict_draws"] == 10 and ev.steps["eager.parity"] >= 0

    expected = problem.reference(*problem.make_inputs("small", seed=0))
    spans = iter([1.0, 3.0] * 40)  # a noisy kernel: never converges, stops at the cap

    def worker_call(session, op, inputs, want_outputs, **fields):
        if op == "time_kernel" and fields.get("trace"):
            kernel_seeds.append(made_for[-1])
        trace = _trace(next(spans)) if fields.get("trace") else None
        reply = SimpleNamespace(
            judge_error="",
            ok=True,
            seconds=0.009,
            trace=trace,
            output=values.value_node(expected),
            launches=_launches(dsl=1, library=2),
        )
        return reply, ([expected], None), None, 0.01  # 10 ms round trips: the spans fit

    ev._worker_call = worker_call
    ev.references = lambda inputs: (expected, expected)
    ev._compare = lambda *args: True
    # The worker's CPU time over each round trip: the 9 ms reported plus what a no-op call uses.
    host.Evaluation._kernel_passes(ev, session=SimpleNamespace(last_cpu_ms=_cpu(9.03, 2.05, 0.0)))
    b = ev.builder
    assert b.can_continue() and not b.has_violation(), b.finish().findings
    assert abs(ev.steps["timing.cpu.main_thread.timed_ms"] - 2.05) < 1e-9
    assert ev.steps["timing.cpu.main_thread.calibrated_ms"] == 2.0
    assert abs(ev.steps["timing.cpu.kernel_thread.timed_ms"] - 0.03) < 1e-9
    assert kernel_seeds[:10] == eager_seeds  # the same inputs, in the same order
    assert len(kernel_seeds) == 30 and not set(kernel_seeds[10:]) & set(eager_seeds)
    assert ev.steps["timing.strict_draws"] == 30
    for step in ("timing.warmup", "timing.parity", "timing.strict", "timing.rechecks"):
        assert ev.steps[step] >= 0
    # The host's clock around the worker's: 10 ms round trips, 9 ms reported, 0.1 ms calibrated.
    assert abs(ev.steps["timing.clock_gap_ms"] - 1.0) < 1e-9
    assert abs(ev.steps["timing.clock_gap_calibrated_ms"] - 0.1) < 1e-9
    assert ev.steps["timing.clock_gap_allowed_ms"] > 1.0
    verdict = b.finish()
    assert verdict.kernel_span.samples == 30 and verdict.eager_span.samples == 10


def test_a_span_longer_than_its_round_trip_is_taken_as_the_round_trip():
    assert _core.accept_strict_sample(5.0, 4.0, 3.0) == (3.0, 3.0)
    assert _core.accept_strict_sample(1.0, 2.0, 3.0) == (1.0, 1.0)
    assert _core.accept_strict_sample(1.0, 0.5, 3.0) == (1.0, 0.5)


@pytest.mark.parametrize(
    ("counts", "require_dsl", "codes"),
    [
        ({"dsl": 1, "library": 3}, True, []),
        ({"dsl": 0, "library": 3}, True, ["runtime.no_dsl_kernel"]),
        ({"dsl": 0, "library": 3}, False, []),  # the rule waived by the policy
        ({"dsl": 1, "raw": 1, "raw_evidence": ["cuModuleLoadData from x.so"]}, True, ["runtime.raw_module"]),
        ({"dsl": 1, "graph": 1}, True, ["runtime.cuda_graph"]),
        ({"dsl": 1, "background": 2}, True, ["runtime.background_launch"]),
    ],
)
def test_the_launch_rule_is_the_cores_and_the_host_applies_it(suite, counts, require_dsl, codes):
    ev = _evaluation(suite.find(28), SMALL, require_dsl=require_dsl)
    reply = SimpleNamespace(ok=True, launches=_launches(**counts))
    host.Evaluation._launch_findings(ev, reply, "correctness")
    found = [f for f in ev.builder.finish().findings if f.severity == "violation"]
    assert [f.code for f in found] == codes
    assert all(f.phase == "correctness" for f in found)


@pytest.mark.parametrize(
    ("knocked_out", "outputs_pass", "violation"), [(2, True, True), (2, False, False), (0, True, False)]
)
def test_the_knockout_draw_fails_a_kernel_whose_outputs_do_not_need_the_dsl(
    suite, knocked_out, outputs_pass, violation
):
    problem = suite.find(28)
    ev = _evaluation(problem, SMALL)
    expected = problem.reference(*problem.make_inputs("small", seed=0))
    ev.references = lambda inputs: (expected, expected)
    reply = SimpleNamespace(judge_error="", ok=True, launches=_launches(dsl=2, knocked_out=knocked_out))
    ev._worker_call = lambda *args, **kwargs: (reply, ([expected], None), [], 0.001)
    ev._judge_outputs = lambda *args, **kwargs: outputs_pass
    host.Evaluation._knockout_draw(ev, 7, session=None)
    codes = [f.code for f in ev.builder.finish().findings if f.severity == "violation"]
    assert codes == (["runtime.dsl_result_unused"] if violation else [])


def test_a_verdict_carries_the_finer_steps_of_its_phases(suite):
    verdict = mkb.evaluate(
        suite.find(28),
        "cutedsl",
        path=Path(__file__).resolve().parents[1] / "adversarial" / "kernels" / "honest_rmsnorm.py",
        device="cpu",
        config={"timing_draws": 4, "warmup_calls": 1, "recheck_draws": 1},
    )
    assert verdict.status == "passed"
    steps = verdict.phase_times.steps
    for name in (
        "startup.audit",
        "startup.fork",
        "startup.worker_ready",
        "startup.prepare",
        "eager.parity",
        "correctness.first_call",
        "timing.warmup",
        "timing.parity",
        "timing.rechecks",
    ):
        assert steps[name] >= 0, name
    startup = sum(v for k, v in steps.items() if k.startswith("startup."))
    assert startup <= verdict.phase_times.startup_s + 1e-6
    # The caller's own steps, outside the host's total_s: taking the host and its exit.
    assert steps["caller.take_host"] >= 0 and steps["caller.host_exit"] >= 0


def test_the_judges_gpu_work_out_of_memory_is_the_kernels_only_after_its_import(suite, monkeypatch):
    """A kernel that hoards the GPU's memory makes the host's next draw fail; that is the kernel's
    violation (runtime.gpu_memory_exhausted), not the judge's error. Before kernel.py's import, or
    where the judge itself needs most of the GPU (a GPU too small for the problem), it is an
    infrastructure error naming the numbers; never a host that dies on it. The GPU case
    gpu_hoard_memory shows it end to end on the H200."""
    reserved = {"bytes": 2 << 30}
    monkeypatch.setattr(host.torch.cuda, "mem_get_info", lambda: (64 << 20, 140 << 30))
    monkeypatch.setattr(host.torch.cuda, "memory_reserved", lambda: reserved["bytes"])
    session = SimpleNamespace(inputs=SimpleNamespace(nbytes=1 << 30))
    oom = host.torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def judged(phase, error, device="cuda"):
        ev = _evaluation(suite.find(28), SMALL)
        ev.device = device
        handled = ev._judge_out_of_memory(phase, error, session)
        return handled, ev.builder.finish()

    for phase in ("import", "correctness", "timing", "shutdown"):
        handled, verdict = judged(phase, oom)
        codes = [f.code for f in verdict.findings]
        assert handled and verdict.status == "policy_violation", (phase, verdict.status)
        assert "runtime.gpu_memory_exhausted" in codes, phase
        assert "3.00 GiB the judge's" in verdict.findings[0].message
    arena = RuntimeError("cudaMalloc(&ptr, bytes) failed: cudaErrorMemoryAllocation (out of memory)")
    assert judged("correctness", arena)[1].status == "policy_violation"
    # Before the import: the judge's own failure, an infrastructure error with the numbers.
    for phase in ("startup", "eager", "calibration"):
        handled, verdict = judged(phase, oom)
        assert handled and verdict.status == "infra_error", phase
        assert "0.06 GiB free of 140.00 GiB" in verdict.message, verdict.message
    # A judge that needs most of the GPU itself: not the kernel's.
    reserved["bytes"] = 100 << 30
    assert judged("correctness", oom)[1].status == "infra_error"
    reserved["bytes"] = 2 << 30
    # Not an out-of-memory error, or the CPU judge (the worker's memory limits are its own):
    # not handled here (the host raises it).
    assert not judged("correctness", ValueError("bad shape"))[0]
    assert not judged("correctness", oom, device="cpu")[0]


def test_a_report_below_the_cpu_time_of_its_call_fails_on_one_cpu(suite):
    """The CPU judge's worker is on one CPU: a call whose CPU time (the kernel's accounting, read
    by the host) exceeds its report by more than a calibration call's is a clock that lies
    (red team round 9: the worker's clock rewritten through raw memory read 50 us a call)."""
    problem = suite.find(28)
    expected = problem.reference(*problem.make_inputs("small", seed=0))

    def judged(kernel_ms: float, main_ms: float, other_ms: float):
        ev = _evaluation(problem, SMALL)
        ev.config = _core.judge_config({"policy": {"require_dsl": False}})
        ev.builder = _core.VerdictBuilder(problem.message, "cutedsl", "small", ev.config)
        ev.plan = _core.MeasurementPlan(ev.config, False)

        def worker_call(session, op, inputs, want_outputs, **fields):
            reply = SimpleNamespace(
                judge_error="", ok=True, seconds=0.00005, trace=None, output=values.value_node(expected)
            )
            return reply, ([expected], None), None, 0.004

        ev._worker_call = worker_call
        ev._launch_findings = lambda *a, **k: None
        ev.references = lambda inputs: (expected, expected)
        ev._compare = lambda *args: True
        ev.eager_parity = [0.8] * 50
        session = SimpleNamespace(last_cpu_ms=_cpu(kernel_ms, main_ms, other_ms))
        host.Evaluation._kernel_passes(ev, session=session)
        return ev.builder

    # The main thread 0.2 ms over calibration's, the kernel's thread as calibrated: honest.
    honest = judged(0.02 + 0.05, 2.0 + 0.2, 0.0)
    assert not honest.has_violation(), honest.finish().findings
    # A 0.85 ms call that its clock says took 50 us, on the kernel's thread: the thread's check.
    forged = judged(0.02 + 0.05 + 0.8, 2.0, 0.0)
    findings = [f for f in forged.finish().findings if f.code == "timing.inconsistent"]
    assert findings and "kernel's thread" in findings[0].message, forged.finish().findings
    # The same work on a thread of its own: the other threads' check.
    moved = judged(0.02 + 0.05, 2.0, 0.8)
    findings = [f for f in moved.finish().findings if f.code == "timing.inconsistent"]
    assert findings and "other threads" in findings[0].message, moved.finish().findings
    # On the main thread (a pending call it runs before the export: red team round 11) within
    # its looser bound (1 ms + 25%, for its noise) it passes: the residual; beyond it, it fails.
    on_main = judged(0.02 + 0.05, 2.0 + 0.7, 0.0)
    assert not on_main.has_violation(), on_main.finish().findings
    heavy = judged(0.02 + 0.05, 2.0 + 1.5, 0.0)
    findings = [f for f in heavy.finish().findings if f.code == "timing.inconsistent"]
    assert findings and "main thread" in findings[0].message, heavy.finish().findings
