"""CuTe DSL, offline (no GPU): every shipped cutedsl solution and every code example of
docs/dsl/cutedsl.md compiles for sm_90a through the `mkb check` hook, and the bad samples are
reported with the right kind and kernel.py line. Each check runs in its own process with only the
CuTe DSL toolchain active (as `mkb check` does); skipped when that toolchain is not installed."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from metakernelbench import toolchains
from metakernelbench.dslcheck import check_kernel

REPO = Path(__file__).resolve().parents[2]
ARCH = "sm_90a"
GUIDE = REPO / "docs" / "dsl" / "cutedsl.md"
SAMPLES = REPO / "tests" / "dsl_samples" / "cutedsl"
SOLUTIONS = sorted(REPO.glob("problems/*/*/solutions/cutedsl.py"))
MARKER = "@@cutedsl-example@@"

pytestmark = pytest.mark.skipif(
    not toolchains.toolchain("cutedsl").installed, reason="cutedsl toolchain not installed"
)


def _slug(solution: Path) -> str:
    return solution.parents[1].name.split("_", 1)[1]


def _guide_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)


def _example_name(code: str) -> str | None:
    m = re.fullmatch(r"# example: (\S+)", code.splitlines()[0].strip())
    return m.group(1) if m else None


EXAMPLES = [(_example_name(code), code) for code in _guide_blocks() if _example_name(code)]


def _errors(diagnostics) -> list:
    return [d for d in diagnostics if d.kind != "ok"]


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.parents[1].name)
def test_solution_compiles_for_sm90a(solution):
    result = check_kernel(solution, "cutedsl", _slug(solution), ARCH)
    assert not _errors(result.diagnostics), [d.render() + "\n" + d.detail for d in result.diagnostics]
    assert any(d.kind == "ok" and ARCH in d.message for d in result.diagnostics)


def test_solutions_exist():
    assert len(SOLUTIONS) >= 6


def _expected_line(path: Path) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if "# expected error" in line)


def test_syntax_error_sample():
    sample = SAMPLES / "syntax_error.py"
    result = check_kernel(sample, "cutedsl", 28, ARCH)
    assert [(d.kind, d.line) for d in result.diagnostics] == [("invalid_submission", _expected_line(sample))]


def test_type_error_sample_is_a_compile_error_at_its_line():
    sample = SAMPLES / "type_error.py"
    compile(sample.read_text(), str(sample), "exec")  # valid Python: only the DSL rejects it
    result = check_kernel(sample, "cutedsl", 28, ARCH)
    errors = _errors(result.diagnostics)
    assert len(errors) == 1, [d.render() for d in result.diagnostics]
    assert errors[0].kind == "compile" and errors[0].line == _expected_line(sample)
    assert "Type mismatch" in errors[0].message and "BFloat16" in errors[0].message


def test_guide_examples_are_named_and_unique():
    """Every ```python block of the guide is a complete example: `# example: <name>` first."""
    unnamed = [code.splitlines()[0] for code in _guide_blocks() if not _example_name(code)]
    assert unnamed == []
    names = [name for name, _ in EXAMPLES]
    assert len(names) >= 5 and len(set(names)) == len(names)


@pytest.mark.parametrize("name,code", EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_guide_example_compiles_for_sm90a(name, code, tmp_path):
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    runner = (
        "import json, sys\n"
        "from metakernelbench import toolchains\n"
        "toolchains.activate(json.loads(sys.argv[1]))\n"
        "from metakernelbench.dslcheck import cutedsl\n"
        f"print({MARKER!r} + json.dumps(cutedsl.check_script(sys.argv[2], sys.argv[3])))\n"
    )
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", runner, json.dumps(toolchains.site_dirs("cutedsl")), str(script), ARCH],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    payload = next((ln[len(MARKER) :] for ln in done.stdout.splitlines() if ln.startswith(MARKER)), None)
    assert payload is not None, done.stderr[-3000:]
    diagnostics = json.loads(payload)
    assert [d for d in diagnostics if d["kind"] != "ok"] == [], diagnostics
    assert any(d["kind"] == "ok" and ARCH in d["message"] for d in diagnostics)
