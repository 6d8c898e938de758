"""Python scalars as inputs (issue 13): the data model, `mkb problems show`, suite validation, the
judge's two transports and the anchor run."""

import json
import subprocess
import sys

import metakernelbench as mkb
import pytest
import torch
from metakernelbench import _core
from metakernelbench.judge import values

QUICK = {"timing_draws": 3, "warmup_calls": 1, "recheck_draws": 1}

SOLVE = """\
import torch


def solve(x, y, alpha, offset, negate):
    if not (type(alpha) is float and type(offset) is int and type(negate) is bool):
        raise TypeError(f"scalars arrived as {type(alpha)}, {type(offset)}, {type(negate)}")
    return ((x.float() * alpha + y.float()) * (-1.0 if negate else 1.0) + offset).to(x.dtype)
"""


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "metakernelbench.cli", *args], capture_output=True, text=True
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_the_loader_keeps_scalar_specs(scalar_suite):
    problem = mkb.load_suite(scalar_suite).find(90)
    alpha, offset, negate = list(problem.message.inputs)[2:]
    assert (alpha.scalar, alpha.dtype, alpha.value, list(alpha.shape)) == (True, "float64", 0.5, [])
    assert (offset.scalar, offset.dtype, offset.value) == (True, "int64", None)
    assert (negate.scalar, negate.dtype) == (True, "bool")
    assert not list(problem.message.inputs)[0].scalar


def test_a_scalar_with_a_shape_is_refused_naming_the_field(scalar_suite):
    path = next(scalar_suite.glob("*/90_*/problem.textproto"))
    path.write_text(path.read_text().replace("scalar: true value: 0.5", 'scalar: true value: 0.5 shape: "n"'))
    with pytest.raises(mkb.InvalidArgumentError, match=r"inputs\[2\]\.shape: a scalar input has no shape"):
        mkb.load_suite(scalar_suite)


def test_problems_show_json_and_text_say_scalar(scalar_suite):
    code, out, err = run("--suite", str(scalar_suite), "problems", "show", "90", "--json")
    assert code == 0, err
    inputs = {i["name"]: i for i in json.loads(out)["inputs"]}
    assert inputs["alpha"]["scalar"] is True and inputs["alpha"]["value"] == 0.5
    assert inputs["offset"]["scalar"] is True and inputs["offset"]["value"] is None
    assert inputs["x"]["scalar"] is False
    code, out, err = run("--suite", str(scalar_suite), "problems", "show", "90")
    assert code == 0, err
    assert "a Python float, always 0.5" in out and "a Python int" in out and "a Python bool" in out


def test_task_md_lists_scalars(scalar_suite):
    problem = mkb.load_suite(scalar_suite).find(90)
    task = _core.render_task(problem.message, "cutedsl")
    assert "| `alpha` | float | scalar | the scale; a Python float, not a tensor; always 0.5 |" in task
    assert "| `negate` | bool | scalar | a Python bool, not a tensor |" in task


def test_suite_validation_accepts_scalars(scalar_suite):
    code, out, err = run("--suite", str(scalar_suite), "suite", "validate", "--json")
    assert code == 0, out + err
    report = json.loads(out)[0]
    assert report["ok"], report


@pytest.mark.parametrize(
    "drawn, message",
    [
        ("torch.tensor(0.5)", "input alpha: a Tensor, metadata a Python float scalar"),
        ("0.25", "input alpha: 0.25, metadata fixes it at 0.5"),
        ("1", "input alpha: a int, metadata a Python float scalar"),
    ],
)
def test_suite_validation_checks_scalar_types_and_fixed_values(scalar_suite, drawn, message):
    path = next(scalar_suite.glob("*/90_*/reference.py"))
    path.write_text(
        path.read_text().replace(
            "return [x, y, 0.5, offset, negate]", f"return [x, y, {drawn}, offset, negate]"
        )
    )
    code, out, _ = run("--suite", str(scalar_suite), "suite", "validate", "--json")
    assert code == 1
    checks = {c["name"]: c for c in json.loads(out)[0]["checks"]}
    assert not checks["matches metadata"]["ok"]
    assert message in checks["matches metadata"]["detail"]


def test_a_bool_is_not_an_int_to_validation(scalar_suite):
    path = next(scalar_suite.glob("*/90_*/reference.py"))
    path.write_text(path.read_text().replace("negate = bool(", "negate = int("))
    code, out, _ = run("--suite", str(scalar_suite), "suite", "validate", "--json")
    assert code == 1
    assert "input negate: a int, metadata a Python bool scalar" in out


def test_the_cpu_transport_carries_scalars_by_value_as_the_same_type():
    transport = values.CpuTransport()
    x = torch.arange(6, dtype=torch.float32).view(2, 3)
    items = [x, 0.125, 7, True, torch.ones(3, dtype=torch.bfloat16), False]
    handles, fds, holder = transport.export(items)
    assert [("scalar" in h) for h in handles] == [False, True, True, True, False, True]
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles})
    opened, _keep = transport.open(list(request.inputs), fds, writable=False, scalars=True)
    assert [type(v) for v in opened[1:4]] == [float, int, bool] and opened[1:4] == [0.125, 7, True]
    assert type(opened[5]) is bool and opened[5] is False
    assert torch.equal(opened[0], x) and torch.equal(opened[4], items[4])
    # The host reads the receiver's view of the same segment back, scalars as they were.
    view = transport.views(holder, items)
    assert view[1:4] == [0.125, 7, True] and torch.equal(view[0], x)


def test_returned_values_carry_no_scalars():
    transport = values.CpuTransport()
    handles, fds, _holder = transport.export([torch.zeros(2), 3.0])
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles})
    with pytest.raises(mkb.InvalidArgumentError, match="outputs are tensors"):
        transport.open(list(request.inputs), fds, writable=False)


def test_an_input_that_is_neither_tensor_nor_python_scalar_is_refused():
    import numpy as np

    with pytest.raises(mkb.InvalidArgumentError, match="numpy.float64"):
        values.CpuTransport().export([torch.zeros(2), np.float64(0.5)])
    with pytest.raises(mkb.InvalidArgumentError, match="int64"):
        values.CpuTransport().export([2**70])


def test_the_anchor_run_passes_scalars_unchanged():
    upcast = values.upcast([torch.ones(2, dtype=torch.bfloat16), 0.5, 3, True])
    assert upcast[0].dtype == torch.float64
    assert upcast[1:] == [0.5, 3, True] and [type(v) for v in upcast[1:]] == [float, int, bool]


def test_the_judge_passes_scalars_to_solve_on_the_cpu(scalar_suite, tmp_path):
    kernel = tmp_path / "kernel.py"
    kernel.write_text(SOLVE)
    problem = mkb.load_suite(scalar_suite).find(90)
    verdict = mkb.evaluate(problem, "cutedsl", path=kernel, device="cpu", config=QUICK)
    assert verdict.correct_draws == 5, verdict.to_dict()
    # A kernel that gets the scalar's meaning wrong fails, so the values arrive, not defaults.
    kernel.write_text(SOLVE.replace("* alpha", "* 0.25"))
    verdict = mkb.evaluate(problem, "cutedsl", path=kernel, device="cpu", config=QUICK)
    assert verdict.correct_draws < 5


@pytest.mark.gpu
def test_the_cuda_transport_carries_scalars_by_value_as_the_same_type():
    """Scalars beside a tensor: the tensor's IPC handle is opened by the worker, another process
    (CUDA refuses to open a handle in the process that made it), so the round trip here takes the
    scalars only, after a tensor's export."""
    transport = values.CudaTransport()
    x = torch.arange(6, dtype=torch.float32, device="cuda")
    handles, fds, _keep = transport.export([x, 0.125, 7, True])
    assert len(handles) == 4
    request = _core.message("WorkerRequest", {"op": "call", "id": 1, "inputs": handles[1:]})
    opened, _ = transport.open(list(request.inputs), fds, writable=False, scalars=True)
    assert opened == [0.125, 7, True] and [type(v) for v in opened] == [float, int, bool]
    transport.close()


@pytest.mark.gpu
def test_the_judge_passes_scalars_to_solve_on_the_gpu(scalar_suite, tmp_path):
    kernel = tmp_path / "kernel.py"
    kernel.write_text(SOLVE)
    problem = mkb.load_suite(scalar_suite).find(90)
    policy = {"policy": {"require_dsl": False, "permissive": True}, **QUICK}
    verdict = mkb.evaluate(problem, "cutedsl", path=kernel, device="cuda", config=policy)
    assert verdict.correct_draws == 5, verdict.to_dict()
