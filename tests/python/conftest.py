import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none visible)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def suite():
    import metakernelbench as mkb

    return mkb.load_suite(REPO / "problems")


@pytest.fixture
def scratch_suite(tmp_path):
    """A copy of the shipped suite that a test may edit."""
    root = tmp_path / "problems"
    shutil.copytree(REPO / "problems", root, ignore=shutil.ignore_patterns("__pycache__", "solutions"))
    return root


@pytest.fixture
def mkb_cli():
    """Runs `mkb ARGS` in-process; returns (exit code, stdout, stderr)."""
    from metakernelbench.cli import main

    def run(*args, capsys=None):
        return main(list(args))

    return run


os.environ.setdefault("MKB_SUITE", str(REPO / "problems"))
