"""The DSL toolchains (site directories), mkb check's framework, mkb docs import and the
solution table: the parts that need no DSL and no GPU."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import toolchains
from metakernelbench.docs_import import import_docs
from metakernelbench.dslcheck import check_arch, check_kernel

REPO = Path(__file__).resolve().parents[2]


def test_dsl_names():
    assert toolchains.check_dsl("CuTe-DSL") == "cutedsl"
    assert toolchains.check_dsl("tvm") == "tirx"
    with pytest.raises(mkb.Error, match="unknown DSL 'triton'"):
        toolchains.check_dsl("triton")


def test_missing_toolchain_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MKB_DSL_HOME", str(tmp_path))
    assert toolchains.site_dirs("tirx") == []
    with pytest.raises(mkb.Error, match="mkb dsl install --dsl tirx"):
        toolchains.site_dirs("tirx", required=True)
    (tmp_path / "tirx").mkdir()
    (tmp_path / "tirx" / toolchains.MARKER).write_text("{not json")
    with pytest.raises(mkb.Error, match="unreadable toolchain record"):
        toolchains.toolchain("tirx")


def test_activate_runs_pth_files_and_puts_the_site_first(tmp_path):
    site = tmp_path / "site"
    (site / "pkg" / "extra").mkdir(parents=True)
    (site / "pkg" / "extra" / "shadow_mod.py").write_text("VALUE = 42\n")
    extra = str(site / "pkg" / "extra")
    (site / "x.pth").write_text(f"import sys; sys.path.insert(0, {extra!r})\n")
    code = (
        "import sys; from metakernelbench import toolchains; toolchains.activate([sys.argv[1]]); "
        "import shadow_mod; print(shadow_mod.VALUE, sys.path.index(sys.argv[1]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True, check=True)
    value, index = out.stdout.split()
    assert value == "42" and int(index) <= 1
    assert toolchains._pth_entries(site, sys.executable) == [".", "pkg/extra"]


def test_installed_toolchains_record_versions():
    for dsl in toolchains.DSLS:
        tc = toolchains.toolchain(dsl)
        if not tc.installed:
            pytest.skip(f"{dsl} toolchain not installed")
        pins = dict(p.split("==")[0:2] for p in tc.spec if "==" in p)
        for name, version in pins.items():
            assert tc.packages[name.split("[")[0]] == version
        assert toolchains.python_path(dsl)[0] == str(tc.site.resolve())


def test_check_rejects_bad_arguments(tmp_path):
    with pytest.raises(mkb.Error, match="not a CUDA architecture"):
        check_arch("hopper")
    with pytest.raises(mkb.Error, match="no such file"):
        check_kernel(tmp_path / "missing.py", "cutedsl", 28, "sm_90a")


# (file bytes, the judge's message, the line): what a submission would get, not counted.
REFUSED = {
    "empty": (b"  \n", "invalid submission: kernel.py is empty (not counted)", None),
    "oversized": (
        b"#" * 300_001,
        "invalid submission: kernel.py is 300001 bytes, over the limit of 300000 (not counted)",
        None,
    ),
    "not UTF-8": (
        b"def solve(*x):\n    return '\xff'\n",
        "invalid submission: kernel.py is not UTF-8 text (not counted)",
        2,
    ),
    "a surrogate": (
        b"x = 1\ny = '\xed\xa0\x80'\n",
        "invalid submission: kernel.py is not UTF-8 text (not counted)",
        2,
    ),
    "NUL bytes": (b"x = 1\0\n", "invalid submission: kernel.py contains NUL bytes (not counted)", None),
    "a syntax error": (
        b"import torch\n\ndef solve(x, r, w)\n    return x\n",
        "invalid submission: kernel.py does not parse: line 3: expected ':' (not counted)",
        3,
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_check_refuses_what_the_judge_refuses_with_its_words(tmp_path, case, monkeypatch):
    """Adversarial (item 4): no toolchain is needed to learn that a submission would be
    invalid; the check never crashes on the bytes."""
    data, message, line = REFUSED[case]
    kernel = tmp_path / "kernel.py"
    kernel.write_bytes(data)
    result = check_kernel(kernel, "tirx", 28, "sm_90a")
    diagnostics = [(d.kind, d.message, d.line) for d in result.diagnostics]
    assert diagnostics == [("invalid_submission", message, line)]
    assert not result.ok
    from metakernelbench.cli import main

    monkeypatch.setenv("MKB_TARGET_ARCH", "sm_90a")
    assert main(["check", str(kernel), "--dsl", "cutedsl", "-p", "28"]) == 1


def test_check_reports_syntax_and_audit_errors_with_lines(tmp_path):
    if not toolchains.toolchain("cutedsl").installed:
        pytest.skip("cutedsl toolchain not installed")
    bad = tmp_path / "kernel.py"
    bad.write_text("import cutlass\n\ndef solve(x, r, w)\n    return x\n")
    result = check_kernel(bad, "cutedsl", 28, "sm_90a")
    assert not result.ok
    assert [(d.kind, d.line) for d in result.diagnostics] == [("invalid_submission", 3)]
    bad.write_text("import cutlass\nimport subprocess\n\ndef solve(x, r, w):\n    return x\n")
    result = check_kernel(bad, "cutedsl", 28, "sm_90a")
    audit = [d for d in result.diagnostics if d.kind == "audit"]
    assert audit and audit[0].line == 2 and "subprocess" in audit[0].message


def test_cli_check_needs_an_arch_without_gpu(tmp_path, monkeypatch):
    from metakernelbench.cli import main

    monkeypatch.delenv("MKB_TARGET_ARCH", raising=False)
    kernel = tmp_path / "kernel.py"
    kernel.write_text("def solve(*x):\n    return x\n")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU gives the default arch")
    assert main(["check", str(kernel), "--dsl", "tirx", "-p", "28"]) == 2


def test_docs_import_indexes_html_notebooks_and_markdown(tmp_path):
    docs = tmp_path / "docs"
    (docs / "api" / "_static").mkdir(parents=True)
    (docs / "api" / "_static" / "skip.html").write_text("<p>theme</p>")
    (docs / "index.html").write_text(
        "<html><head><title>CuTe DSL &amp; you</title><script>var x = 1;</script></head><body>"
        "<h1>Intro</h1><p>Layouts  compose.</p><h2>Copy atoms</h2>"
        "<pre>cute.copy(atom, src, dst)\n</pre></body></html>"
    )
    (docs / "api" / "tensor.md").write_text("# Tensors\n\n## make_tensor\ntext\n")
    (docs / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "source": ["# Notebook\n", "words"]},
                    {"cell_type": "code", "source": ["x = 1"]},
                ]
            }
        )
    )
    (docs / "broken.ipynb").write_text("{")
    guides = tmp_path / "guides"
    result = import_docs("cutedsl", docs, guides)
    assert result.pages == 3 and result.destination == guides / "cutedsl" / "official"
    assert any("broken.ipynb" in s for s in result.skipped)
    page = (result.destination / "index.md").read_text()
    assert "# Intro" in page and "cute.copy(atom, src, dst)" in page and "var x" not in page
    index = (result.destination / "INDEX.md").read_text()
    assert "`index.md` — CuTe DSL & you: Copy atoms" in index
    assert "`api/tensor.md` — Tensors: make_tensor" in index
    assert not (result.destination / "api" / "_static").exists()
    assert "```python\nx = 1\n```" in (result.destination / "nb.md").read_text()


def test_docs_import_errors_name_the_path(tmp_path):
    with pytest.raises(mkb.Error, match="no such file or folder"):
        import_docs("tirx", tmp_path / "nope", tmp_path / "g")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(mkb.Error, match="no documentation pages found"):
        import_docs("tirx", tmp_path / "empty", tmp_path / "g")


def test_verify_solutions_writes_rows_and_resumes(tmp_path, monkeypatch):
    """On the CPU a solution is judged on the small workload; the table is written after each
    row and a second run reuses it."""
    from metakernelbench.verify import solutions, verify

    root = tmp_path / "problems"
    src = REPO / "problems" / "mlp_norm" / "28_fused_add_rmsnorm_h4096_llama31_8b_bf16"
    dst = root / "mlp_norm" / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "solutions"))
    (dst / "solutions").mkdir()
    (dst / "solutions" / "tirx.py").write_text(
        "import torch\n\n\ndef solve(hidden_states, residual, weight):\n"
        "    total = hidden_states.float() + residual.float()\n"
        "    inv = torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + 1e-5)\n"
        "    return (total * inv * weight.float()).to(hidden_states.dtype)\n"
    )
    suite = mkb.load_suite(root)
    assert [(p.number, d) for p, d, _ in solutions(suite)] == [(28, "tirx")]
    monkeypatch.setenv("MKB_DSL_HOME", str(tmp_path / "dsl"))
    (tmp_path / "dsl" / "tirx").mkdir(parents=True)
    (tmp_path / "dsl" / "tirx" / toolchains.MARKER).write_text(json.dumps({"spec": [], "packages": {}}))
    out = tmp_path / "table.json"
    seen = []
    table = verify(suite, out, device="cpu", progress=seen.append)
    row = table["rows"][0]
    assert row["status"] in ("passed", "correct") and row["dsl"] == "tirx" and row["compile_s"] is not None
    assert json.loads(out.read_text())["rows"][0]["slug"] == row["slug"]
    verify(suite, out, device="cpu", progress=seen.append)
    assert "kept from table.json" in seen[-1]
    # A row records what it judged; once the solution changes, a rerun judges it again.
    assert row["problem_fingerprint"] == suite.find(28).fingerprint and len(row["solution_sha256"]) == 64
    solution = dst / "solutions" / "tirx.py"
    solution.write_text(solution.read_text() + "\n# changed\n")
    table = verify(suite, out, device="cpu", progress=seen.append)
    assert "kept from" not in seen[-2] and table["rows"][0]["solution_sha256"] != row["solution_sha256"]


def test_installed_toolchains_are_byte_compiled():
    """`mkb dsl install` byte-compiles each site (pip runs with --no-compile): a judge host imports
    its DSL at every start, and without .pyc files (none may be written under
    PYTHONDONTWRITEBYTECODE) it compiled some 250 modules each time."""
    import importlib.util

    checked = 0
    for dsl in toolchains.DSLS:
        tc = toolchains.toolchain(dsl)
        if not tc.installed:
            continue
        sources = [p for p in Path(tc.site).rglob("__init__.py") if "__pycache__" not in p.parts][:200]
        missing = [p for p in sources if not Path(importlib.util.cache_from_source(str(p))).exists()]
        assert sources and len(missing) <= len(sources) // 10, (dsl, missing[:5])
        checked += 1
    if not checked:
        pytest.skip("no DSL toolchain installed")


def test_byte_compile_writes_pyc_even_where_python_writes_none(tmp_path, monkeypatch):
    import importlib.util

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")  # left to the import that needs it
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    toolchains._byte_compile(tmp_path, sys.executable)
    assert Path(importlib.util.cache_from_source(str(tmp_path / "pkg" / "__init__.py"))).exists()
