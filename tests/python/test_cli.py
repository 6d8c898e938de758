"""The `mkb` command line: problems list/show, version, demo, and its errors."""

import json
import subprocess
import sys


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_problems_list_json_has_families_and_roofline():
    code, out, _ = run("problems", "list", "--json")
    assert code == 0
    problems = json.loads(out)
    by_number = {p["number"]: p for p in problems}
    assert {2, 25, 28} <= set(by_number)
    assert by_number[28]["family"] == "mlp_norm"
    assert by_number[28]["workloads"]["full"]["flops"] == 297144320
    assert by_number[25]["workloads"]["full"]["min_bytes"] == 536887296


def test_problems_list_filters_by_family():
    code, out, _ = run("problems", "list", "--json", "--family", "attention")
    assert code == 0
    assert {p["family"] for p in json.loads(out)} == {"attention"}


def test_problems_list_table():
    code, out, _ = run("problems", "list")
    assert code == 0 and "fused_add_rmsnorm" in out


def test_problems_show():
    code, out, _ = run("problems", "show", "25")
    assert code == 0
    assert "batched_kv_cache_block_copy_remap_uint8" in out and "updated in place" in out


def test_unknown_problem_is_one_line_error_exit_2():
    code, out, err = run("problems", "show", "fused_add_rmsnorm")
    assert code == 2
    assert err.startswith("error: no problem 'fused_add_rmsnorm'")
    assert "Traceback" not in err


def test_bad_suite_folder_names_it(tmp_path):
    code, _, err = run("--suite", str(tmp_path / "nowhere"), "problems", "list")
    assert code == 2 and "nowhere" in err


def test_version():
    code, out, _ = run("version")
    assert code == 0 and out.startswith("metakernelbench 0.1.0")


# ------------------------------------------------------------------------------------------------
# Every --json output is strict JSON


def _reject_constant(name):
    raise ValueError(f"not strict JSON: {name}")


def strict_json(text):
    """json.loads that refuses NaN, Infinity and -Infinity (RFC 8259 has none of them)."""
    return json.loads(text, parse_constant=_reject_constant)


def json_commands():
    """The path of every command of the CLI that has a --json option, found in the CLI itself."""
    import typer.main
    from metakernelbench.cli import app

    found = set()

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        elif any("--json" in getattr(p, "opts", ()) for p in command.params):
            found.add(path)

    walk(typer.main.get_command(app), ())
    return found


def _store_with_undefined_numbers(tmp_path):
    """A store whose statistics hold NaN (an empty standing group, a rate of 0/0) and infinities
    nowhere to be seen: their JSON must still be strict."""
    import metakernelbench as mkb
    from metakernelbench import experiments as ex

    def attempt(spec):
        passed = spec.arm != "solo_tirx"
        final = {"status": "passed" if passed else "mismatch", "passed": passed}
        if passed:
            final["speedup_vs_eager"] = 2.0
            final["kernel_parity"] = {"samples_ms": [1.0, 1.1, float("nan"), 0.9]}
            final["eager_parity"] = {"samples_ms": [2.0, 2.1, 1.9, 2.2]}
        return {"final": final, "skill_out": {"text": f"from {spec.arm}"}, "usage": {"cost_usd": 0.1}}

    exp = ex.Experiment.standard(
        "j", "fake/model", problems=["28"], replicates=1, workload="small", device="cpu"
    )
    result = exp.run(tmp_path / "j.db", executor=attempt, suite=mkb.load_suite())
    assert result.complete
    return tmp_path / "j.db"


def test_every_json_output_is_strict_json(tmp_path):
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    store = _store_with_undefined_numbers(tmp_path)
    kernel = repo / "tests" / "adversarial" / "kernels" / "honest_rmsnorm.py"
    solution = next(repo.glob("problems/mlp_norm/28_*/solutions/tirx.py"))
    # One invocation per --json command, with the exit status it should end with.
    invocations = {
        ("problems", "list"): (["problems", "list", "--json"], 0),
        ("problems", "show"): (["problems", "show", "28", "--json"], 0),
        ("stats",): (["stats", str(store), "--json", "--resamples", "50"], 0),
        ("eval",): (
            ["eval", "--problem", "28", "--dsl", "cutedsl", str(kernel), "--device", "cpu", "--json"],
            0,
        ),
        ("check",): (["check", str(solution), "--dsl", "tirx", "-p", "28", "--arch", "sm_90a", "--json"], 0),
        ("dsl", "info"): (["dsl", "info", "--json"], 0),
        ("suite", "validate"): (["suite", "validate", "-p", "28", "--json"], 0),
        ("suite", "verify-solutions"): (
            [
                "suite",
                "verify-solutions",
                "--device",
                "cpu",
                "-p",
                "28",
                "--dsl",
                "cutedsl",
                "--out",
                str(tmp_path / "vs.json"),
                "--json",
            ],
            1,  # a CUDA kernel on the CPU judge fails; its table is still printed
        ),
    }
    assert json_commands() == set(invocations), "a --json command without a strict-JSON check"
    for path, (args, expected) in invocations.items():
        code, out, err = run(*args)
        assert code == expected, (path, err[-2000:])
        document = strict_json(out)  # stdout holds the JSON document and nothing else
        assert document, path
    report = strict_json(run("stats", str(store), "--json", "--resamples", "50")[1])
    standing = [row for row in report["standing"] if row["n"] == 0]
    assert standing and standing[0]["help_rate"] is None  # NaN printed as null
    assert report["measurement_noise"]["included"] is True


def test_strict_turns_non_finite_numbers_into_null():
    import numpy as np
    from metakernelbench.cli import _state

    value = {"a": [1.0, float("nan"), float("inf")], "b": np.float32("-inf"), "c": np.int64(3), "d": "NaN"}
    assert _state.strict(value) == {"a": [1.0, None, None], "b": None, "c": 3, "d": "NaN"}
