"""examples/notebooks/transfer_analysis.ipynb runs top to bottom (nbclient) on a synthetic store
shipped with the tests: tests/data/upstream-results (two models, three problems) imported into a
fresh store, then the notebook loads it, computes everything and draws every figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from metakernelbench import upstream

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "notebooks" / "transfer_analysis.ipynb"
DATA = REPO / "tests" / "data" / "upstream-results"


def test_transfer_analysis_notebook_runs_on_a_synthetic_store(tmp_path, monkeypatch, suite):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    store = tmp_path / "synthetic.db"
    upstream.import_results(DATA, store, suite=suite)
    monkeypatch.setenv("MKB_STORE", str(store))
    monkeypatch.setenv("MKB_REPORT_DIR", str(tmp_path / "report"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "commit the notebook without outputs"
    )
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, when a cell fails

    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]
    assert len(images) == 5  # the five figures of the report
    text = "\n".join(
        output.get("text", "") + output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "openrouter/z-ai/glm-5.3" in text and "Too little data" not in text
    assert (tmp_path / "report" / "report.html").exists()
