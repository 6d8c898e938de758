"""TVM TIRx offline checks, CPU only: every shipped TIRx solution and every code example of
docs/dsl/tirx.md compiles for sm_90a through the `mkb check` hook (dslcheck/tirx.py), and the bad
samples produce diagnostics of the right kind at the right line.

The hook runs where the TIRx toolchain is active, so all compiles happen in one child process
(importing TVM once); the static audit runs here, as the judge runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from metakernelbench import _core, toolchains
from metakernelbench.dslcheck import tirx as hook

ROOT = Path(__file__).resolve().parents[2]
ARCH = "sm_90a"
SITES = toolchains.site_dirs("tirx")
SOLUTIONS = sorted(ROOT.glob("problems/*/*/solutions/tirx.py"))
GUIDE = ROOT / "docs" / "dsl" / "tirx.md"
SAMPLES = ROOT / "tests" / "dsl_samples" / "tirx"
PROBLEM_28 = next(ROOT.glob("problems/*/28_*"))

needs_tirx = pytest.mark.skipif(not SITES, reason="TIRx toolchain not installed (mkb dsl install --dsl tirx)")


def _guide_examples() -> dict[str, tuple[str, str | None]]:
    """name -> (code, problem directory or None) for each ```python block of the guide that
    starts with `# example: NAME` (an optional `# problem: SLUG` line names its problem)."""
    out = {}
    for block in re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S):
        m = re.match(r"# example: (\S+)\n(?:# problem: (\S+)\n)?", block)
        if not m:
            continue
        problem = None
        if m.group(2):
            problem = str(next(ROOT.glob(f"problems/*/*_{m.group(2)}")))
        out[m.group(1)] = (block, problem)
    return out


EXAMPLES = _guide_examples()

_CHILD = r"""
import importlib.util, json, sys
from metakernelbench import toolchains
jobs, sites, arch = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
toolchains.activate(sites)
import torch
from metakernelbench.dslcheck import tirx as hook
results = {}
for name, kernel, problem_dir in jobs:
    inputs = []
    if problem_dir:
        spec = importlib.util.spec_from_file_location("_reference", problem_dir + "/reference.py")
        reference = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(reference)
        torch.manual_seed(0)
        inputs = list(reference.make_inputs(workload="small", device="cpu"))
    results[name] = hook.check(kernel, inputs, arch)
print("@@results@@" + json.dumps(results))
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict[str, list[dict]]:
    """Diagnostics of every solution, guide example and the type-error sample, from one child."""
    if not SITES:
        pytest.skip("TIRx toolchain not installed")
    jobs = [(f"solution:{p.parents[1].name}", str(p), str(p.parents[1])) for p in SOLUTIONS]
    examples_dir = tmp_path_factory.mktemp("tirx_examples")
    for name, (code, problem) in EXAMPLES.items():
        path = examples_dir / f"{name}.py"
        path.write_text(code)
        jobs.append((f"example:{name}", str(path), problem))
    jobs.append(("sample:type_error", str(SAMPLES / "type_error.py"), str(PROBLEM_28)))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(jobs), json.dumps(SITES), ARCH],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    payload = [ln for ln in done.stdout.splitlines() if ln.startswith("@@results@@")]
    assert payload, f"the check process failed (exit {done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(payload[0][len("@@results@@") :])


def _errors(diagnostics: list[dict], allowed: tuple[str, ...] = ()) -> list[dict]:
    return [d for d in diagnostics if d["kind"] != "ok" and d["message"] not in allowed]


def _marked_line(path: Path, marker: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if marker in ln)


def test_there_is_something_to_check():
    assert len(SOLUTIONS) >= 6
    assert len(EXAMPLES) >= 4


@needs_tirx
@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.parents[1].name)
def test_solution_compiles_for_sm90a(checked, solution):
    diagnostics = checked[f"solution:{solution.parents[1].name}"]
    assert not _errors(diagnostics), json.dumps(diagnostics, indent=1)[:4000]
    assert any(d["kind"] == "ok" and ARCH in d["message"] for d in diagnostics)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.parents[1].name)
def test_solution_passes_the_static_audit(solution):
    findings = _core.static_audit(solution.read_text(), "tirx", True, None)
    violations = [f"{f.code}: {f.message} ({f.evidence})" for f in findings if f.severity == "violation"]
    assert not violations


@needs_tirx
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_guide_example_compiles(checked, name):
    diagnostics = checked[f"example:{name}"]
    allowed = () if EXAMPLES[name][1] else ("kernel.py defines no solve(*inputs)",)
    assert not _errors(diagnostics, allowed), json.dumps(diagnostics, indent=1)[:4000]
    assert any(d["kind"] == "ok" for d in diagnostics)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_guide_example_passes_the_static_audit(name):
    findings = _core.static_audit(EXAMPLES[name][0], "tirx", True, None)
    assert not [f.message for f in findings if f.severity == "violation"]


def test_syntax_sample_reports_syntax_at_its_line():
    # The hook rejects a syntax error before it imports TVM: no toolchain needed.
    path = SAMPLES / "syntax_error.py"
    diagnostics = hook.check(str(path), [], ARCH)
    assert [d["kind"] for d in diagnostics] == ["syntax"]
    assert diagnostics[0]["line"] == _marked_line(path, "<- the syntax error")


@needs_tirx
def test_type_sample_reports_compile_at_its_line(checked):
    path = SAMPLES / "type_error.py"
    errors = _errors(checked["sample:type_error"])
    assert [d["kind"] for d in errors] == ["compile"], errors
    assert errors[0]["line"] == _marked_line(path, "<- the type error")
    assert "2-dimensional" in errors[0]["message"]


def test_missing_kernel_is_a_diagnostic_not_an_exception(tmp_path):
    diagnostics = hook.check(str(tmp_path / "missing.py"), [], ARCH)
    assert [d["kind"] for d in diagnostics] == ["import"]


_PIN_CHILD = r"""
import json, os, sys
from metakernelbench import toolchains
toolchains.activate(json.loads(sys.argv[1]))
os.environ.pop("CUDA_PATH", None)
os.environ["CUDA_HOME"] = sys.argv[2]
from tvm.support import nvcc
if sys.argv[3] == "pin":
    from metakernelbench.judge.worker import pin_tvm_cuda_toolkit
    pin_tvm_cuda_toolkit()
spawned = []
sys.addaudithook(lambda event, args: spawned.append(event) if event == "subprocess.Popen" else None)
found = (nvcc.find_cuda_path(), list(nvcc.get_cuda_version()))
print(json.dumps({"found": found, "spawned": spawned}))
"""


@needs_tirx
@pytest.mark.parametrize("mode", ["pin", "unpinned"])
def test_the_worker_pins_tvms_cuda_toolkit_lookup(tmp_path, mode):
    """TVM's toolkit lookup runs `which nvcc` / `nvcc --version`, subprocesses the worker's runtime
    audit refuses (every TIRx solution failed so on the H200): pinned before the audit, it spawns
    nothing and answers from the toolkit's cuda.h."""
    home = tmp_path / "cuda"
    (home / "include").mkdir(parents=True)
    (home / "include" / "cuda.h").write_text("#pragma once\n#define CUDA_VERSION 12080\n")
    (home / "bin").mkdir()
    (home / "bin" / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    (home / "bin" / "nvcc").chmod(0o755)
    env = {**os.environ, "PATH": f"{home / 'bin'}:{os.environ['PATH']}"}
    proc = subprocess.run([sys.executable, "-c", _PIN_CHILD, json.dumps(SITES), str(home), mode],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if mode == "pin":
        assert result == {"found": [str(home), [12, 8]], "spawned": []}
    else:
        assert result["spawned"], "without the pin TVM runs nvcc: the test would not see the difference"


def test_the_toolkit_version_is_read_from_cuda_h(tmp_path):
    from metakernelbench.judge.worker import cuda_toolkit_version

    (tmp_path / "include").mkdir()
    assert cuda_toolkit_version(str(tmp_path)) is None
    (tmp_path / "include" / "cuda.h").write_text("/* x */\n#define CUDA_VERSION 13000\n")
    assert cuda_toolkit_version(str(tmp_path)) == (13, 0)
