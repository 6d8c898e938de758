"""What the README, the docs and the command line's help tell a reader: they cite only files that
exist (never "SPEC §…", which is not in the repository), and the README's counts are true."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer.main
from metakernelbench.cli import app

REPO = Path(__file__).resolve().parents[2]
# A path of this repository as the docs write it: docs/..., scripts/..., a folder at the top.
_PATH = re.compile(
    r"(?<![\w./-])((?:docs|scripts|benchmarks|tests|examples|proto|libmkb|python|bindings|cmake|problems)"
    r"/[\w./+*<>{}-]*[\w/*>}])"
)
# Paths of the TVM source tree that the agents' TIRx guide cites (not this repository's).
_TVM_TREE = ("python/tvm/", "tests/python/tirx/")
# Paths of the published harness's checkout that the problem-format page cites.
_PUBLISHED_TREE = ("problems/_sol_execbench/",)
# Documents that are not in the repository.
_ABSENT = re.compile(r"SPEC §|\bSPEC\.md|\bPROBLEMS\.md|\bSTYLE\.md|\bDEVICE\.md")


def _documents() -> dict[str, str]:
    paths = [REPO / "README.md", REPO / "benchmarks" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return {str(p.relative_to(REPO)): p.read_text() for p in paths}


def _help_texts() -> dict[str, str]:
    """Every help text of the CLI: each command's and each of its options'."""
    out: dict[str, str] = {}

    def walk(command, path):
        out[" ".join(path) or "mkb"] = command.help or ""
        for param in command.params:
            if getattr(param, "help", None):
                out[f"{' '.join(path)} {param.opts[0]}"] = param.help
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


def _missing_paths(text: str) -> list[str]:
    missing = []
    for match in _PATH.finditer(text):
        ref = match.group(1).rstrip(".")
        if ref.startswith(_TVM_TREE + _PUBLISHED_TREE):
            continue
        if any(c in ref for c in "*<{"):
            # A pattern: the folder before its first wildcard must exist.
            ref = re.split(r"[*<{]", ref)[0].rsplit("/", 1)[0]
        if not (REPO / ref).exists():
            missing.append(ref)
    return missing


def test_docs_and_help_cite_only_files_that_exist():
    sources = {**_documents(), **{f"`{k} --help`": v for k, v in _help_texts().items()}}
    absent = {where: _ABSENT.findall(text) for where, text in sources.items() if _ABSENT.search(text)}
    assert not absent, f"cites documents that are not in the repository: {absent}"
    missing = {where: m for where, text in sources.items() if (m := _missing_paths(text))}
    assert not missing, f"cites files that do not exist: {missing}"


def test_the_checks_find_what_they_look_for():
    assert _missing_paths("see docs/nowhere.md and docs/statistics.md") == ["docs/nowhere.md"]
    assert _missing_paths("problems/*/*/solutions/<dsl>.py") == []
    assert _ABSENT.search("as SPEC §3 asks")
    assert len(_help_texts()) > 50


def _ranges(numbers: list[int]) -> str:
    """[2, 19, 20, 21] -> "02 and 19–21", as the README writes it."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]:02d}" if len(r) == 1 else f"{r[0]:02d}–{r[-1]:02d}" for r in runs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _listing(numbers: list[int]) -> str:
    """[2, 23, 24] -> "02, 23 and 24"."""
    names = [f"{n:02d}" for n in sorted(numbers)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def test_the_readme_counts_are_true(suite):
    readme = (REPO / "README.md").read_text()
    numbers = [p.number for p in suite]
    families = list(dict.fromkeys(p.family for p in sorted(suite, key=lambda p: p.number)))
    assert f"| the suite | problems {_ranges(numbers)} ({', '.join(families)})" in readme
    if len(numbers) == 74:
        assert "All 74 problems of the published suite are here" in readme
    else:
        assert f"the remaining {74 - len(numbers)} problems of the published suite" in readme
    with_solutions = [
        p.number
        for p in suite
        if all((p.directory / "solutions" / f"{d}.py").is_file() for d in ("cutedsl", "tirx"))
    ]
    assert f"| reference solutions | problems {_listing(with_solutions)} in both DSLs" in readme
    # What it says of their verification is what the newest committed table shows for the
    # current problems and solution files (a row records both: stale rows do not count).
    from metakernelbench.verify import is_current

    # The README speaks of the H200: its newest table (an H100's, e.g. a partial run, is not it).
    newest = sorted((REPO / "benchmarks" / "results").glob("solutions_h200_*.json"))[-1]
    rows = json.loads(newest.read_text())["rows"]
    by_number = {p.number: p for p in suite}
    current = [
        r
        for r in rows
        if r["number"] in by_number
        and is_current(
            r, by_number[r["number"]], by_number[r["number"]].directory / "solutions" / f"{r['dsl']}.py"
        )
    ]
    if not current:
        assert "none yet verified on the H200 against the published definitions" in readme
        return
    passed = sorted({r["number"] for r in current if r["passed"]})
    assert f"verified on the H200: {_listing(passed)} pass" in readme
    speedups = [r["speedup_vs_eager"] for r in current if r["passed"]]
    assert f"{min(speedups):.1f}x–{max(speedups):.0f}x faster than eager" in readme
    assert "74 fused subgraphs" in readme  # the published suite's size, as the paper gives it
