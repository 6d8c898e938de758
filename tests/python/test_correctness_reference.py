"""A problem's optional correctness_reference (docs/problem-format.md, "Slow references"): the
judge computes its expected outputs and float64 anchors with it, the eager baseline keeps timing
the published `reference`, suite validation checks the two agree, and the loader refuses one that
is not a function."""

import metakernelbench as mkb
import pytest
from conftest import SCALAR_PROBLEM_REFERENCE
from metakernelbench.suite_check import validate_problem

QUICK = {"timing_draws": 3, "warmup_calls": 1, "recheck_draws": 1}


def _published(guard_anchor=True, sleep_s=0.2, offset=""):
    """reference.py of the test problem with its computation moved to correctness_reference and
    `reference` as a slow published formulation of it: with guard_anchor it refuses float64 inputs
    (so a judge that ran it for an anchor fails), it sleeps sleep_s (what the eager baseline
    times), and `offset` ("+ 1") makes it compute something else."""
    guard = (
        (
            "    if x.dtype == torch.float64:\n"
            "        raise RuntimeError('the published formulation ran for an anchor')\n"
        )
        if guard_anchor
        else ""
    )
    return SCALAR_PROBLEM_REFERENCE.replace(
        "def reference(x, y, alpha, offset, negate):\n",
        "def reference(x, y, alpha, offset, negate):\n"
        "    import time\n"
        f"{guard}"
        f"    time.sleep({sleep_s})\n"
        f"    return (correctness_reference(x, y, alpha, offset, negate).float() {offset}).to(x.dtype)\n"
        "\n\n"
        "def correctness_reference(x, y, alpha, offset, negate):\n",
    )


SOLVE = """\
def solve(x, y, alpha, offset, negate):
    return ((x.float() * alpha + y.float()) * (-1.0 if negate else 1.0) + offset).to(x.dtype)
"""


def _reference_file(scalar_suite):
    return scalar_suite / "mlp_norm" / "90_scaled_add_scalars_bf16" / "reference.py"


def test_the_judge_compares_against_correctness_reference_and_times_reference(scalar_suite, tmp_path):
    _reference_file(scalar_suite).write_text(_published())
    kernel = tmp_path / "kernel.py"
    kernel.write_text(SOLVE)
    problem = mkb.load_suite(scalar_suite).find(90)
    assert problem.has_correctness_reference
    verdict = mkb.evaluate(problem, "cutedsl", path=kernel, device="cpu", config=QUICK)
    assert verdict.passed and verdict.correct_draws == 5, verdict.to_dict()
    # The eager baseline is the published (slow) formulation, never the faster one.
    assert verdict.eager_parity.min_ms >= 200


def test_without_correctness_reference_the_judge_uses_reference(scalar_suite, tmp_path):
    # The same guarded published formulation alone: the judge's anchor run is its, and fails.
    text = _published().replace("correctness_reference(", "_computation(")
    _reference_file(scalar_suite).write_text(text)
    kernel = tmp_path / "kernel.py"
    kernel.write_text(SOLVE)
    problem = mkb.load_suite(scalar_suite).find(90)
    assert not problem.has_correctness_reference
    with pytest.raises(mkb.InternalError, match="the published formulation ran for an anchor"):
        mkb.evaluate(problem, "cutedsl", path=kernel, device="cpu", config=QUICK)


def test_validation_checks_the_two_formulations_agree(scalar_suite):
    path = _reference_file(scalar_suite)
    path.write_text(_published(guard_anchor=False, sleep_s=0))
    report = validate_problem(mkb.load_suite(scalar_suite).find(90), seeds=(1, 2, 3))
    check = next(c for c in report.checks if c.name == "correctness_reference agrees with reference")
    assert check.ok and report.ok, report.to_dict()
    # A faster formulation that computes something else (here: 1 less) is reported.
    path.write_text(_published(guard_anchor=False, sleep_s=0, offset="+ 1"))
    report = validate_problem(mkb.load_suite(scalar_suite).find(90), seeds=(1, 2, 3))
    check = next(c for c in report.checks if c.name == "correctness_reference agrees with reference")
    assert not check.ok and "misses the allowance" in check.detail and "float64 runs differ" in check.detail
    assert not report.ok


def test_the_loader_refuses_a_correctness_reference_that_is_not_a_function(scalar_suite):
    _reference_file(scalar_suite).write_text(SCALAR_PROBLEM_REFERENCE + "\ncorrectness_reference = 3\n")
    problem = mkb.load_suite(scalar_suite).find(90)
    with pytest.raises(mkb.InvalidArgumentError, match="reference.py: correctness_reference is not callable"):
        problem.reference(*problem.make_inputs("small", seed=0))
