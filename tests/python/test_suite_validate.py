"""`mkb suite validate`: well-posed problems pass, an ill-posed one is caught."""

import json
import re
import subprocess
import sys


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_foundation_problems_are_well_posed():
    code, out, err = run("suite", "validate", "--json", "-p", "02", "-p", "25", "-p", "28")
    assert code == 0, err
    reports = {r["number"]: r for r in json.loads(out)}
    assert set(reports) == {2, 25, 28}
    for r in reports.values():
        assert r["ok"], r
        for name in ("zeros", "constant", "random"):
            factor = r["trivial_candidate_factor"][name]
            assert factor > 1 if factor is not None else name in r["trivial_candidate_unbounded"]
    # an unchanged cache: infinitely over (null in strict JSON, and listed as unbounded)
    assert reports[25]["trivial_candidate_factor"]["passthrough"] is None
    assert "passthrough" in reports[25]["trivial_candidate_unbounded"]


def test_a_problem_whose_output_is_always_zero_is_caught(scratch_suite):
    # A reference that (wrongly) returns zeros makes the zeros candidate pass: validate must fail.
    ref = next(scratch_suite.glob("mlp_norm/28_*/reference.py"))
    text = ref.read_text()
    wrong = text.replace("return (total * inv_rms * weight.to(compute)).to(hidden_states.dtype)",
                         "return (total * inv_rms * weight.to(compute) * 0).to(hidden_states.dtype)")
    assert wrong != text
    text = wrong
    ref.write_text(text)
    code, out, _ = run("--suite", str(scratch_suite), "suite", "validate", "--json", "-p", "28")
    assert code == 1
    report = json.loads(out)[0]
    failed = {c["name"] for c in report["checks"] if not c["ok"]}
    assert "zeros fails" in failed


def test_metadata_mismatch_is_caught(scratch_suite):
    path = next(scratch_suite.glob("mlp_norm/28_*/problem.textproto"))
    text = path.read_text()
    changed = re.sub(r'outputs \{ name: "out" dtype: BFLOAT16', 'outputs { name: "out" dtype: FLOAT32', text)
    assert changed != text
    path.write_text(changed)
    code, out, _ = run("--suite", str(scratch_suite), "suite", "validate", "--json", "-p", "28")
    assert code == 1
    assert any(c["name"] == "matches metadata" and not c["ok"] for c in json.loads(out)[0]["checks"])
