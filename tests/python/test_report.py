"""`mkb stats` and `mkb report` on a store made by `mkb demo` (with a fast stand-in for the
scripted model) and on an imported upstream results tree; figures that lack data say so; the
HTML report opens in headless Chromium with every figure rendered."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import metakernelbench as mkb
import pytest
from metakernelbench import reporting
from metakernelbench.cli import demo as demo_cli
from metakernelbench.cli import main
from metakernelbench.reporting import figures

DATA = Path(__file__).resolve().parents[1] / "data" / "upstream-results"
FIGURE_NAMES = [
    "paired_lift_by_problem",
    "transfer_by_relative_standing",
    "lift_per_family",
    "model_by_direction",
    "usage_and_cost_per_arm",
]
JSON_KEYS = [
    "config",
    "confidence",
    "tau",
    "levels",
    "n_cells",
    "n_resolved",
    "n_with_control",
    "aggregates",
    "usage",
    "comparisons",
    "tiers",
    "lift",
    "problems",
    "standing",
    "measurement_noise",
]


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


class DemoStandIn:
    """Stands in for the scripted model behind `mkb demo` (the real one takes minutes): every
    attempt passes, at speedups that differ by arm and problem; tokens and cost as an LLM's."""

    SPEEDUPS = {"solo_cutedsl": 1.2, "solo_tirx": 0.9, "cutedsl2tirx_skill": 1.5, "tirx2cutedsl_skill": 0.7}

    def __call__(self, spec):
        speedup = self.SPEEDUPS[spec.arm] * (1 + spec.problem_number / 100)
        final = {"status": "passed", "passed": True, "speedup_vs_eager": speedup}
        return {
            "submissions": [{"index": 0, "counted": True, "verdict": final}],
            "final": final,
            "skill_out": {"text": f"what {spec.arm} learned on {spec.problem_slug}"},
            "usage": {
                "input_tokens": 40_000 + 100 * spec.problem_number,
                "cached_input_tokens": 10_000,
                "output_tokens": 3_000,
                "cost_usd": 0.12,
                "agent_seconds": 95.0,
            },
        }


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("demo") / "mkb-demo.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo_cli, "demo_executor", lambda suite, store, *_: DemoStandIn())
        code, out = run_cli("demo", "--device", "cpu", "--store", str(store))
    assert code == 0, out
    return store


@pytest.fixture(scope="module")
def upstream_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("upstream") / "up.db"
    code, out = run_cli("import", "upstream-results", str(DATA), "--store", str(store))
    assert code == 0, out
    return store


@pytest.fixture(scope="module")
def reports(tmp_path_factory, demo_store, upstream_store):
    """`mkb report` of both stores: {name: out folder}."""
    out = {}
    for name, store in (("demo", demo_store), ("upstream", upstream_store)):
        folder = tmp_path_factory.mktemp(f"report-{name}")
        code, text = run_cli("report", str(store), "--out", str(folder), "--resamples", "500")
        assert code == 0, text
        assert f"wrote {folder / 'report.html'}" in text
        out[name] = folder
    return out


def test_stats_prints_the_tables_of_the_demo_store(demo_store):
    code, out = run_cli("stats", str(demo_store), "--resamples", "300")
    assert code == 0
    for title in (
        "Overview",
        "R@t and S",
        "Paired lift of the skill over its solo",
        "Transfer by relative standing",
        "Usage and cost per arm",
        "R@t and S per cell (problem × direction)",
        "R@t and S lifts with intervals",
    ):
        assert title in out
    flat = " ".join(out.split())
    for column in ("cells", "src ok", "S lift [CI]", "R@1 lift [CI]", "ΔGM [CI]", "ran", "not run"):
        assert column in flat, column
    assert "measurement noise" in flat and "none of the 12 passed attempts has timing samples" in flat
    assert "scripted/demo · cutedsl2tirx" in out
    # the stand-in makes every cutedsl2tirx pair better and every tirx2cutedsl pair worse
    assert re.search(r"direction\s+│ cutedsl2tirx\s+│\s+3 │\s+3 │\s+\+\d+%", out)


def test_stats_json_has_the_documented_keys_and_by_levels(demo_store):
    code, out = run_cli(
        "stats", str(demo_store), "--json", "--resamples", "300", "--by", "family", "--by", "direction,model"
    )
    assert code == 0
    document = json.loads(out)
    assert list(document) == JSON_KEYS
    assert document["levels"] == ["overall", "family", "model,direction"]
    assert document["config"]["bootstrap_resamples"] == 300
    assert {row["level"] for row in document["lift"]} == {"overall", "family", "model,direction"}
    # the same numbers as the Python API
    report = mkb.Store(demo_store).stats(
        "demo", {"bootstrap_resamples": 300}, levels=["overall", "family", "model,direction"]
    )
    assert document == json.loads(report.to_json())


def test_stats_errors_are_one_line(demo_store, tmp_path, capsys):
    assert main(["stats", str(demo_store), "--by", "model,task"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "error: --by: 'task' is not one of model, direction, family (or 'overall')"
    )
    assert main(["stats", str(tmp_path / "none.db")]) == 2
    assert "none.db: no such store" in capsys.readouterr().err
    assert main(["stats", str(demo_store), "-e", "other"]) == 2
    assert "no experiment 'other'" in capsys.readouterr().err
    assert main(["stats", str(demo_store), "--tau", "-1"]) == 2
    assert "--tau: must be > 0" in capsys.readouterr().err


def test_experiments_of_one_design_are_pooled_as_more_replicates(demo_store, tmp_path, suite):
    store = tmp_path / "two.db"
    shutil.copy(demo_store, store)
    from metakernelbench import experiments as ex

    again = demo_cli.demo_experiment()  # the demo's own experiment, under another name
    again.name = "demo-again"
    ex.run(again, store, executor=DemoStandIn(), suite=suite, retry_delay_s=0)
    one = reporting.store_stats(demo_store)
    both = reporting.store_stats(store)
    assert both.experiments == ["demo", "demo-again"]
    assert both.cells == 2 * one.cells
    assert any("share a design" in note and "pooled" in note for note in both.notes), both.notes
    assert reporting.store_stats(store, ["demo-again"]).experiments == ["demo-again"]


def test_report_writes_html_markdown_figures_and_json(reports, demo_store):
    for folder in reports.values():
        html = (folder / "report.html").read_text()
        md = (folder / "report.md").read_text()
        for figure in FIGURE_NAMES:
            png = folder / f"{figure}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"]({figure}.png)" in md
            match = re.search(rf'id="fig-{figure}"[^>]*src="data:image/png;base64,([^"]+)"', html)
            assert match, figure
            assert base64.b64decode(match.group(1)) == png.read_bytes()
        assert "Too little data" not in html  # both stores have something for every figure
        assert "<script" not in html and "http://" not in html and "https://" not in html  # self-contained
        for heading in ("Paired lift and tests", "Relative standing", "Usage and cost"):
            assert heading in html and heading in md
        for title in (
            "R@t and S per cell",
            "R@t and S lifts with intervals",
            "ΔGM [CI]",
            "measurement noise",
        ):
            assert title in html and title in md, title
        document = json.loads((folder / "stats.json").read_text())
        assert list(document) == JSON_KEYS
    assert "Fewer than 10 problems" in (reports["demo"] / "report.html").read_text()
    assert "dashscope/qwen3.8-flash" in (reports["upstream"] / "report.md").read_text()


def test_figures_without_data_say_so(tmp_path, suite, capsys):
    """A store whose trials all failed: every figure says plainly that it has too little data."""
    from metakernelbench import experiments as ex

    def broken(spec):
        raise RuntimeError("no model behind this executor")

    exp = ex.Experiment.standard(
        "broken", "fake/model", problems=["02"], replicates=1, workload="small", device="cpu"
    )
    ex.run(exp, tmp_path / "broken.db", executor=broken, suite=suite, retry_delay_s=0)
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "broken.db"), "--out", str(out), "--resamples", "50"]) == 0
    printed = capsys.readouterr().out
    html = (out / "report.html").read_text()
    assert "No resolved comparison yet" in html
    assert html.count("Too little data for this figure") == len(FIGURE_NAMES)
    assert printed.count("Too little data for this figure") == len(FIGURE_NAMES)
    assert main(["stats", str(tmp_path / "broken.db")]) == 0
    assert "no resolved comparison yet" in capsys.readouterr().out


def test_figures_name_the_level_they_miss(demo_store):
    report = mkb.Store(demo_store).stats("demo", {"bootstrap_resamples": 50}, levels=["overall"])
    plots = {p.name: p for p in figures.all_figures(report)}
    assert plots["lift_per_family"].note.endswith("the report was computed without the family level")
    assert plots["model_by_direction"].note.endswith("without the model,direction level")
    assert plots["paired_lift_by_problem"].has_data  # falls back to the pooled level
    assert plots["usage_and_cost_per_arm"].has_data
    assert plots["paired_lift_by_problem"]._repr_png_()[:4] == b"\x89PNG"


def test_figures_draw_the_control_arm_where_there_is_one(tmp_path, suite):
    from metakernelbench import experiments as ex

    exp = ex.Experiment.standard(
        "ctl",
        "fake/model",
        control=True,
        problems=["02", "25", "28"],
        replicates=1,
        workload="small",
        device="cpu",
    )

    def executor(spec):
        speedup = {"solo_cutedsl": 2.0, "solo_tirx": 0.6}.get(spec.arm, 1.0) * (1 + spec.problem_number / 50)
        final = {"status": "passed", "passed": True, "speedup_vs_eager": speedup}
        return {"final": final, "skill_out": {"text": "lesson"}}

    ex.run(exp, tmp_path / "ctl.db", executor=executor, suite=suite, retry_delay_s=0)
    stats = reporting.store_stats(tmp_path / "ctl.db", config={"bootstrap_resamples": 50})
    assert (stats.report.standing["arm"] == "control").any()
    plot = figures.transfer_by_relative_standing(stats.report)
    legend = [t.get_text() for t in plot.figure.legends[0].get_texts()]
    assert "control: second solo" in legend
    assert "arm" in reporting.tables.lift(stats).columns


# ------------------------------------------------------------------------------------------------
# The HTML report in a browser


def _chromium() -> str:
    """The Chromium binary, or skip / fail: Debian (this project's CI) must have it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    release = Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
    if path and (
        os.path.realpath(path).startswith("/snap/")
        or "/snap/" in Path(path).read_bytes()[:4096].decode("latin-1")
    ):
        pytest.skip(
            "Chromium here is a snap (Ubuntu 24.04), which cannot read test files outside $HOME; "
            "the browser test runs on Debian 12 (scripts/setup.sh installs chromium there)"
        )
    if path is None:
        if re.search(r"^ID=debian$", release, re.M):
            pytest.fail(
                "chromium is not installed: scripts/setup.sh installs it on Debian (apt-get install chromium)"
            )
        pytest.skip("no Chromium on this machine (scripts/setup.sh installs it on Debian 12)")
    return path


# Added to a copy of report.html: records, once the page has loaded, every figure's decoded size.
_PROBE = """<script>
window.addEventListener("load", () => {
  for (const img of document.querySelectorAll("img.mkb-figure")) {
    const box = img.getBoundingClientRect();
    img.setAttribute("data-probe", [img.complete, img.naturalWidth, img.naturalHeight,
                                    Math.round(box.width), Math.round(box.height)].join(","));
  }
  document.body.setAttribute("data-probed", "1");
});
</script>"""


def _browser(chromium: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={cwd / 'profile'}",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=cwd)


@pytest.mark.parametrize("name", ["demo", "upstream"])
def test_the_html_report_opens_in_chromium_with_every_figure(reports, name, tmp_path):
    from PIL import Image

    chromium = _chromium()
    report = reports[name] / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("</body>", _PROBE + "</body>"))
    dom = _browser(chromium, "--dump-dom", probe.as_uri(), cwd=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-probed="1"' in dom.stdout
    found = dict(re.findall(r'id="fig-([a-z_]+)"[^>]*data-probe="([^"]+)"', dom.stdout))
    if not found:  # attribute order is the browser's
        found = dict(
            (m[1], m[0]) for m in re.findall(r'data-probe="([^"]+)"[^>]*id="fig-([a-z_]+)"', dom.stdout)
        )
    assert sorted(found) == sorted(FIGURE_NAMES)
    for figure, probe_values in found.items():
        complete, natural_w, natural_h, shown_w, shown_h = probe_values.split(",")
        assert complete == "true" and int(natural_w) > 300 and int(natural_h) > 100, (figure, probe_values)
        assert int(shown_w) > 300 and int(shown_h) > 50, (figure, probe_values)

    shot = tmp_path / "report.png"
    result = _browser(
        chromium, f"--screenshot={shot}", "--window-size=1280,4200", report.as_uri(), cwd=tmp_path
    )
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 4200)
    colors = image.getcolors(maxcolors=image.size[0] * image.size[1])
    assert colors is not None and len(colors) > 200  # text, tables and plotted colours: not a blank page
    # the figures' own colours reached the screen (the family and help / harm colours)
    painted = {rgb for _, rgb in colors}
    assert any(abs(r - 0x2E) < 24 and abs(g - 0x8B) < 24 and abs(b - 0x57) < 24 for r, g, b in painted)
