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
    assert by_number[25]["workloads"]["full"]["min_bytes"] == 67112960


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
    checkout = tmp_path / "checkout"
    (checkout / "problems" / "mlp_norm").mkdir(parents=True)
    (checkout / "problems" / "mlp_norm" / "36_rmsnorm_fake_bf16.py").write_text("def reference(x):\n    return x\n")
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
        # A published file without make_inputs(): one row that says so, exit status 1.
        ("suite", "compare-upstream"): (["suite", "compare-upstream", str(checkout), "--json"], 1),
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


# ------------------------------------------------------------------------------------------------
# One vocabulary


def _commands():
    """(path, click command) of every leaf command."""
    import typer.main
    from metakernelbench.cli import app

    out = []

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        else:
            out.append((path, command))

    walk(typer.main.get_command(app), ())
    return out


def _options(command):
    return [p for p in command.params if getattr(p, "opts", None) and p.opts[0].startswith("--")]


def test_problem_and_family_options_accept_both_spellings():
    pairs = {
        "--problem": "--problems",
        "--problems": "--problem",
        "--family": "--families",
        "--families": "--family",
    }
    seen = 0
    for path, command in _commands():
        for option in _options(command):
            for name in option.opts:
                if name in pairs:
                    seen += 1
                    assert pairs[name] in option.opts, (path, option.opts)
    assert seen >= 8


def test_device_has_one_default_and_one_meaning():
    devices = [(path, o) for path, c in _commands() for o in _options(c) if "--device" in o.opts]
    assert {path for path, _ in devices} >= {
        ("eval",),
        ("run",),
        ("suite", "validate"),
        ("suite", "verify-solutions"),
    }
    assert len({(o.default, o.help) for _, o in devices}) == 1, [(p, o.default, o.help) for p, o in devices]
    assert devices[0][1].default == "auto"
    code, _, err = run("suite", "validate", "--device", "gpu", "-p", "28")
    assert code == 2 and "'gpu' is not one of auto, cpu, cuda" in err


def test_suite_is_accepted_after_the_subcommand_too(scratch_suite):
    import shutil

    shutil.rmtree(next(scratch_suite.glob("attention/02_*")))
    every = {p["number"] for p in json.loads(run("problems", "list", "--json")[1])}
    before = {
        p["number"] for p in json.loads(run("--suite", str(scratch_suite), "problems", "list", "--json")[1])
    }
    after = {
        p["number"] for p in json.loads(run("problems", "list", "--suite", str(scratch_suite), "--json")[1])
    }
    assert 2 in every and before == after == every - {2}
    code, _, err = run("problems", "show", "02", "--suite", str(scratch_suite))
    assert code == 2 and "no problem '02'" in err
    # Every command that reads the suite takes the option.
    readers = {path for path, c in _commands() if any("--suite" in o.opts for o in _options(c))}
    assert readers >= {
        ("problems", "list"),
        ("problems", "show"),
        ("eval",),
        ("check",),
        ("run",),
        ("demo",),
        ("suite", "validate"),
        ("suite", "verify-solutions"),
        ("import", "upstream-results"),
    }


def test_version_flag():
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("metakernelbench ") and len(out.splitlines()) == 1


def test_help_is_not_hard_wrapped():
    """Each paragraph of a command's help is one line: the terminal wraps it at its own width."""
    for path, command in _commands():
        for paragraph in (command.help or "").split("\n\n"):
            assert "\n" not in paragraph, (path, paragraph)
    for args in (["--help"], ["suite", "--help"], ["dsl", "--help"], ["docs", "--help"]):
        assert not _early_breaks(args), (args, _early_breaks(args))


def _early_breaks(args):
    """Lines of the command list of `mkb ARGS` (80 columns) that end before the next line's
    first word would have fitted: a line break taken from the source, not made by the terminal."""
    import os

    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True, env=env
    ).stdout
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "Commands" in line)
    panel = [line for line in lines[start + 1 :] if line.startswith("│")]
    column = len(panel[0]) - len(panel[0][2:].split("  ", 1)[1].lstrip()) if panel else 0
    breaks = []
    for line, after in zip(panel, panel[1:], strict=False):
        if after[2:column].strip():  # the next line starts another command
            continue
        text, following = line[column:-1].rstrip(), after[column:-1].split()
        room = len(line) - 2 - column
        if following and len(text) + 1 + len(following[0]) <= room:
            breaks.append(line)
    return breaks


def test_rich_markup_never_eats_text():
    code, out, _ = run("problems", "show", "28")
    assert code == 0
    assert "[num_tokens, hidden]" in out and "[hidden]" in out and "[14509, 4096]" in out


def test_names_are_legible_in_80_columns(tmp_path):
    import os

    env = {**os.environ, "COLUMNS": "80"}
    proc = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", "problems", "list"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80
    assert "…" not in proc.stdout
    flat = "".join(ch for ch in proc.stdout if ch not in "│ \n")  # the table, folded cells joined
    for p in json.loads(run("problems", "list", "--json")[1]):
        assert p["slug"][:20] in flat, p["slug"]
