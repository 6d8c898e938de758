import os
import shutil
from pathlib import Path

import pytest

# The shared recipe-fact checks assert outside a test module: show their operands on failure too.
pytest.register_assert_rewrite("sol_recipe_facts")

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


SCALAR_PROBLEM_TEXTPROTO = """\
# proto-file: proto/mkb/v1/problem.proto
# proto-message: mkb.v1.Problem
slug: "scaled_add_scalars_bf16"
number: 90
family: MLP_NORM
title: "A scaled add whose scale, offset and sign are Python scalars (test problem)"
description: "out = ((x * alpha + y) * (-1 if negate else 1) + offset) in float32, rounded to bf16."
provenance { source: "custom" model: "none" license: "Apache-2.0 (test)" }
inputs { name: "x" dtype: BFLOAT16 shape: "n" }
inputs { name: "y" dtype: BFLOAT16 shape: "n" }
inputs { name: "alpha" dtype: FLOAT64 scalar: true value: 0.5 description: "the scale" }
inputs { name: "offset" dtype: INT64 scalar: true description: "0..3, drawn" }
inputs { name: "negate" dtype: BOOL scalar: true }
outputs { name: "out" dtype: BFLOAT16 shape: "n" }
output_container: SINGLE_TENSOR
workloads {
  name: "full"
  description: "n = 4096"
  params { key: "n" value: 4096 }
  roofline { flops: 12288 min_bytes: 24576 derivation: "3 flops and 6 bytes per element" }
  peak_memory_bytes: 200000
}
workloads {
  name: "small"
  description: "n = 64"
  params { key: "n" value: 64 }
  roofline { flops: 192 min_bytes: 384 derivation: "3 flops and 6 bytes per element" }
  peak_memory_bytes: 4096
}
"""

SCALAR_PROBLEM_REFERENCE = """\
import torch

SIZES = {"full": 4096, "small": 64}


def reference(x, y, alpha, offset, negate):
    compute = torch.promote_types(x.dtype, torch.float32)
    out = (x.to(compute) * alpha + y.to(compute)) * (-1.0 if negate else 1.0) + offset
    return out.to(x.dtype)


def make_inputs(workload="full", device="cpu"):
    n = SIZES[workload]
    x = torch.randn(n, device=device).to(torch.bfloat16)
    y = torch.randn(n, device=device).to(torch.bfloat16)
    offset = int(torch.randint(0, 4, (), device=device))
    negate = bool(torch.randint(0, 2, (), device=device))
    return [x, y, 0.5, offset, negate]
"""


@pytest.fixture
def scalar_suite(tmp_path):
    """A one-problem suite (number 90) whose inputs include a fixed float, a drawn int and a drawn
    bool scalar."""
    folder = tmp_path / "scalars" / "mlp_norm" / "90_scaled_add_scalars_bf16"
    folder.mkdir(parents=True)
    (folder / "problem.textproto").write_text(SCALAR_PROBLEM_TEXTPROTO)
    (folder / "reference.py").write_text(SCALAR_PROBLEM_REFERENCE)
    return tmp_path / "scalars"


@pytest.fixture
def mkb_cli():
    """Runs `mkb ARGS` in-process; returns (exit code, stdout, stderr)."""
    from metakernelbench.cli import main

    def run(*args, capsys=None):
        return main(list(args))

    return run


os.environ.setdefault("MKB_SUITE", str(REPO / "problems"))
