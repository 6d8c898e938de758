"""The adversarial suite (tests/adversarial/cases.toml): every cheating or broken kernel gets one
of the verdicts it may get, honest kernels pass, and the judge itself never fails.

Most cases go through `mkb.evaluate` in this process, with the configuration `mkb eval` builds
from the same options (`_eval_options`, `_config`): one judge for the whole run, each
evaluation's host forked from its warm host template, as an experiment judges attempt after
attempt. A case that sets environment variables, or one of `CLI_CASES`, goes through the `mkb
eval` command itself in a fresh process (exit status 2 there: the judge failed). A fresh
process per case spent most of its ~10 s starting its host template on a 2-core machine.

MKB_ADVERSARIAL_RECORD=FILE appends one JSON line per case judged (name, device, expected and
got, message, speedup, violation codes, wall time): the results file of a GPU run
(scripts/gpu-check.sh keeps it as $OUT/adversarial.jsonl).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

HERE = Path(__file__).resolve().parents[1] / "adversarial"
CASES = tomllib.loads((HERE / "cases.toml").read_text())["case"]


def _marks(case) -> list:
    marks = [pytest.mark.gpu] if case.get("device", "cpu") == "cuda" else []
    if "pending" in case:
        # The verdict needs a defence still being built (the key names it): expected to fail
        # until then, and a pass is no error.
        marks.append(pytest.mark.xfail(strict=False, reason=f"pending: {case['pending']}"))
    return marks


def _params():
    return [pytest.param(case, id=case["name"], marks=_marks(case)) for case in CASES]


def _native_kernel(tmp_path) -> Path:
    """extension_in_workspace: native/pending_rmsnorm.c compiled against this interpreter (the
    worker's) and embedded in native/extension_in_workspace.py.in."""
    import shutil
    import sysconfig

    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if compiler is None or not Path(include, "Python.h").exists():
        pytest.skip("needs a C compiler and Python.h to build the case's extension")
    native = HERE / "native"
    so = tmp_path / "mkbx.so"
    source = native / "pending_rmsnorm.c"
    command = [compiler, "-shared", "-fPIC", "-O2", f"-I{include}", str(source), "-o", str(so)]
    subprocess.run(command, check=True, capture_output=True)
    template = (native / "extension_in_workspace.py.in").read_text()
    path = tmp_path / "extension_in_workspace.py"
    path.write_text(template.replace("{so!r}", repr(so.read_bytes())))
    return path


def _kernel_path(case, tmp_path) -> Path:
    if case["kernel"] == "<generated: extension_in_workspace>":
        return _native_kernel(tmp_path)
    if case["kernel"].startswith("<generated"):
        path = tmp_path / "oversized.py"
        path.write_text("import torch\n" + "#" * 300_000 + "\ndef solve(*a):\n    return a\n")
        assert path.stat().st_size > 300_000
        return path
    return HERE / "kernels" / case["kernel"]


def _suite_with_roofline(case, tmp_path) -> list[str]:
    """A copy of the suite whose problem claims another min_bytes (to exercise the floor audit)."""
    import re
    import shutil

    if "roofline_min_bytes" not in case:
        return []
    root = tmp_path / "problems"
    shutil.copytree(HERE.parents[1] / "problems", root)
    for path in root.glob(f"*/{int(case['problem']):02d}_*/problem.textproto"):
        text = re.sub(
            r"min_bytes: [0-9.e+]+", f"min_bytes: {case['roofline_min_bytes']:.6g}", path.read_text()
        )
        path.write_text(text)
    return ["--suite", str(root)]


def _main_thread_cpu_only(verdict) -> bool:
    """Whether the verdict failed on the CPU judge's main-thread check alone (timing.inconsistent
    naming the worker's main thread, and no other violation)."""
    if verdict["status"] == "passed":
        return False
    violations = [f for f in verdict["findings"] if f["severity"] == "violation"]
    return len(violations) == 1 and (
        violations[0]["code"] == "timing.inconsistent"
        and violations[0]["message"].startswith("the worker's main thread used")
    )


def _record(case, verdict, wall_s: float) -> None:
    path = os.environ.get("MKB_ADVERSARIAL_RECORD")
    if not path:
        return
    row = {
        "case": case["name"],
        "device": case.get("device", "cpu"),
        "dsl": case.get("dsl", "cutedsl"),
        "problem": case["problem"],
        "expect": case["expect"],
        "status": verdict["status"],
        "as_expected": verdict["status"] in case["expect"],
        "message": verdict["message"][:300],
        "speedup_vs_eager": verdict["speedup_vs_eager"],
        "violations": sorted({f["code"] for f in verdict["findings"] if f["severity"] == "violation"}),
        "gpu": verdict["environment"]["gpu_name"] or verdict["environment"]["device"],
        "wall_s": round(wall_s, 2),
        **({"retried_after": verdict["retried_after"][:300]} if "retried_after" in verdict else {}),
        # the host's clock around the worker's (the data the clock bound is set from)
        "clock_gap": {
            k.removeprefix("timing."): v
            for k, v in verdict.get("phase_times", {}).get("steps", {}).items()
            if k.startswith(("timing.clock_gap", "timing.cpu."))
        },
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


# Cases judged through the `mkb eval` command (besides every case with `env`): one per option the
# command turns into configuration, an honest kernel, a strict and a permissive cheat, TIRx.
CLI_CASES = {
    "honest_rmsnorm",
    "forge_verdict",
    "patch_judge_permissive",
    "infinite_loop",
    "allocate_until_oom",
    "reach_worker_through_tvm_permissive",
}


def _options(case) -> dict:
    """The `mkb eval` options a case is judged with, by their names in cli/eval.py."""
    device = case.get("device", "cpu")
    options: dict = {
        "timing_draws": 10 if device == "cuda" else 8,
        "warmup": 3 if device == "cuda" else 2,
        "permissive": case.get("mode") == "permissive",
        "no_dsl_rule": case.get("dsl_rule") is False,
        "allow": list(case.get("allow", [])),
    }
    if "call_timeout" in case:
        options["call_timeout"] = float(case["call_timeout"])
    if "memory_limit" in case:
        options["memory_limit"] = case["memory_limit"]
    return options


def _eval_options(case) -> list[str]:
    """The case's options as `mkb eval` arguments (after the kernel and --problem)."""
    o = _options(case)
    args = ["--dsl", case.get("dsl", "cutedsl"), "--device", case.get("device", "cpu")]
    args += ["--timing-draws", str(o["timing_draws"]), "--warmup", str(o["warmup"])]
    if o["permissive"]:
        args.append("--permissive")
    if o["no_dsl_rule"]:
        args.append("--no-dsl-rule")
    for code in o["allow"]:
        args += ["--allow", code]
    if "call_timeout" in o:
        args += ["--call-timeout", str(o["call_timeout"])]
    if "memory_limit" in o:
        args += ["--memory-limit", o["memory_limit"]]
    if "workload" in case:
        args += ["--workload", case["workload"]]
    return args


def _config(case) -> dict:
    """The JudgeConfig `mkb eval` builds from the case's options (cli/eval.py's own builder)."""
    from metakernelbench.cli.eval import judge_config

    return judge_config(**_options(case))


def _judge_by_command(case, tmp_path) -> dict:
    command = [
        sys.executable,
        "-m",
        "metakernelbench.cli",
        *_suite_with_roofline(case, tmp_path),
        "eval",
        str(_kernel_path(case, tmp_path)),
        "--problem",
        case["problem"],
        "--json",
        *_eval_options(case),
    ]
    env = {**os.environ, **case.get("env", {})}
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode in (0, 1), f"the judge failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    verdict = json.loads(proc.stdout)
    assert (proc.returncode == 0) == (verdict["status"] == "passed")
    return verdict


def _judge_in_process(case, tmp_path, monkeypatch) -> dict:
    import metakernelbench as mkb
    from metakernelbench.cli._state import strict

    # mkb.evaluate keeps one judge (and its warm host templates) per environment; pytest names
    # the running test in the environment, which would make every case start a judge of its own.
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)

    suite = _suite_with_roofline(case, tmp_path)
    verdict = mkb.evaluate(
        case["problem"],
        case.get("dsl", "cutedsl"),
        path=_kernel_path(case, tmp_path),
        device=case.get("device", "cpu"),
        workload=case.get("workload"),
        config=_config(case),
        suite_root=suite[1] if suite else None,
    )
    # As `mkb eval --json` prints it.
    return json.loads(json.dumps(strict(verdict.to_dict()), allow_nan=False, default=str))


def test_config_is_what_mkb_eval_builds(monkeypatch):
    """The in-process cases are judged with the configuration the command would give them."""
    from metakernelbench.cli import app
    from typer.testing import CliRunner

    seen = []

    def fake_evaluate(problem, dsl, path=None, device=None, workload=None, config=None):
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr("metakernelbench.evaluate", fake_evaluate)
    for case in CASES:
        if "env" in case or case["kernel"].startswith("<generated"):
            continue
        seen.clear()
        kernel = str(_kernel_path(case, None))
        CliRunner().invoke(app, ["eval", kernel, "--problem", case["problem"], *_eval_options(case)])
        assert seen == [_config(case)], case["name"]


@pytest.mark.parametrize("case", _params())
def test_adversarial_case(case, tmp_path, monkeypatch):
    if case.get("needs_dsl"):
        from metakernelbench import toolchains

        dsl = case.get("dsl", "cutedsl")
        if not toolchains.toolchain(dsl).installed:
            pytest.skip(f"the case goes through {dsl}: mkb dsl install --dsl {dsl}")
    started = time.monotonic()

    def judge() -> dict:
        if "env" in case or case["name"] in CLI_CASES:
            return _judge_by_command(case, tmp_path)
        return _judge_in_process(case, tmp_path, monkeypatch)

    verdict = judge()
    if case["expect"] == ["passed"] and _main_thread_cpu_only(verdict):
        # The one load-sensitive check (docs/judge.md, "On the CPU judge"): an honest kernel's
        # main-thread excess grows with the machine's load (a fresh-clone `make test` beside a
        # build read 2.74 ms timed against 1.15 ms calibrated once, 3 of 3 passing unloaded).
        # Judged once more; a kernel that moves its work onto the main thread trips it every
        # time, and the second verdict is the one asserted (the record keeps the first's message).
        first = verdict["message"]
        verdict = judge()
        verdict["retried_after"] = first
    _record(case, verdict, time.monotonic() - started)
    summary = f"{verdict['status']}: {verdict['message']}"
    if verdict["status"] == "infra_error":  # the judge's failure: what its worker left
        process = verdict.get("process") or {}
        keys = ("exit_code", "signal_name", "timed_out", "out_of_memory", "stderr_tail")
        summary += f"\nworker: {json.dumps({k: process.get(k) for k in keys})}"
    assert verdict["status"] in case["expect"], f"{case['why']}; got {summary}"
    if verdict["status"] != "passed":
        assert not verdict["passed"] and verdict["speedup_vs_eager"] is None
    if "mismatch_kind" in case:
        assert verdict["first_mismatch"]["kind"] == case["mismatch_kind"], summary
    if "message" in case:
        assert case["message"] in verdict["message"], f"{case['why']}; got {summary}"
    if "max_speedup" in case and verdict["speedup_vs_eager"] is not None:
        assert verdict["speedup_vs_eager"] <= case["max_speedup"], f"{case['why']}; got {summary}"
    if "finding" in case:
        codes = {f["code"] for f in verdict["findings"] if f["severity"] == "violation"}
        assert case["finding"] in codes, summary
    # Calibration runs before kernel.py exists: whatever the runtime audit refused there is the
    # judge's own fault, whichever kernel is judged (a guard of names the worker itself changes
    # reported there once, and the report hid the kernel's own change after it).
    refused = [f["message"] for f in verdict["findings"] if f["code"] == "judge.calibration_refused"]
    assert not refused, refused
    # The agent-facing report never carries the judge's internals.
    text = json.dumps(verdict)
    assert "metakernelbench/judge" not in text and "mkb-eval-" not in text, summary


def test_cli_cases_exist():
    names = {case["name"] for case in CASES}
    assert CLI_CASES <= names, sorted(CLI_CASES - names)


def test_only_a_main_thread_cpu_excess_alone_is_judged_again():
    """The honest cases' one retry is for the load-sensitive main-thread check alone: any other
    violation, or that one beside another, is asserted as it came."""
    main = {
        "code": "timing.inconsistent",
        "severity": "violation",
        "message": "the worker's main thread used a median 2.740 ms of CPU per timed call",
    }
    kernel = {**main, "message": "the kernel's thread used a median 0.9 ms of CPU per timed call"}
    other = {"code": "runtime.native_code", "severity": "violation", "message": "refused"}
    warning = {"code": "judge.note", "severity": "warning", "message": "w"}

    def verdict(status, *findings):
        return {"status": status, "findings": list(findings)}

    assert _main_thread_cpu_only(verdict("policy_violation", main))
    assert _main_thread_cpu_only(verdict("policy_violation", main, warning))
    assert not _main_thread_cpu_only(verdict("passed", main))
    assert not _main_thread_cpu_only(verdict("policy_violation", kernel))
    assert not _main_thread_cpu_only(verdict("policy_violation", main, other))
    assert not _main_thread_cpu_only(verdict("mismatch"))
