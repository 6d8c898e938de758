"""The quantization problems 52-61 pose the published SOL-ExecBench recipes' signatures on their
full workload (issue 17). tests/data/quantization_signatures.json holds what the recipes show
(names, order, shapes, dtypes, Python floats, the outputs' container and count, which inputs
arrive quantised and which the reference quantises itself), written by hand from their layouts;
null marks what a recipe does not show. Checked against each problem's metadata, against what its
make_inputs draws on the full workload and against what its reference returns there (on the meta
device: shapes and dtypes without the memory or the compute)."""

import json
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch

TABLE = json.loads((Path(__file__).parents[1] / "data" / "quantization_signatures.json").read_text())
FACTS = TABLE["problems"]
SUITE = {problem.number: problem for problem in mkb.load_suite()}
CONTAINERS = {"tensor": "single_tensor", "tuple": "tuple", "list": "list"}
# What a quantised operand is made of, per format: codes, then block scales.
QUANTISED = {"fp8": ("float8_e4m3fn", "float32"), "nvfp4": ("float4_e2m1fn_x2", "float8_e4m3fn")}
UNQUANTISED = ("bfloat16", "float16", "float32")


def _shape(spec, params):
    return tuple(int(d) if d.lstrip("-").isdigit() else params[d] for d in spec.shape)


def _ids(facts):
    return f"{facts['number']:02d}"


def test_the_table_covers_the_quantization_family():
    assert [facts["number"] for facts in FACTS] == list(range(52, 62))
    for facts in FACTS:
        problem = SUITE[facts["number"]]
        assert problem.message.family == "quantization"
        assert facts["recipe"] == f"problems/_sol_execbench/{problem.number:02d}_{problem.slug}.json"
        assert problem.message.provenance.source == "SQ"
        assert facts["recipe"] in problem.message.provenance.notes


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_metadata_poses_the_recipes_inputs_on_the_full_workload(facts):
    problem = SUITE[facts["number"]]
    params = problem.workload("full").params
    specs = list(problem.message.inputs)
    assert len(specs) == len(facts["inputs"])
    for index, (spec, fact) in enumerate(zip(specs, facts["inputs"], strict=True)):
        where = f"input {index} ({spec.name})"
        if fact["name"] is not None:
            assert spec.name == fact["name"], where
        if fact["kind"] == "float":
            assert spec.scalar and spec.dtype == "float64", where
            if fact["value"] is not None:
                assert spec.value == fact["value"], where
            continue
        assert not spec.scalar, where
        assert _shape(spec, params) == tuple(fact["shape"]), where
        if fact["dtype"] is not None:
            assert spec.dtype == fact["dtype"], where


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_quantised_operands_arrive_as_codes_and_scales_and_the_rest_unquantised(facts):
    """Every e4m3 / packed-e2m1 input is followed by its block scales (NVFP4: and a global decode
    scale); the inputs the reference quantises itself arrive unquantised."""
    problem = SUITE[facts["number"]]
    specs = list(problem.message.inputs)
    by_name = {spec.name: spec for spec in specs}
    for name in facts["self_quantised"]:
        assert by_name[name].dtype in UNQUANTISED, name
    kind = facts.get("quantised")
    codes = [
        i
        for i, spec in enumerate(specs)
        if spec.dtype in ("float8_e4m3fn", "float4_e2m1fn_x2")
        and not (i > 0 and specs[i - 1].dtype == "float4_e2m1fn_x2")
    ]
    if kind is None:
        assert not codes
        return
    code_dtype, scale_dtype = QUANTISED[kind]
    assert codes
    for i in codes:
        assert specs[i].dtype == code_dtype and specs[i + 1].dtype == scale_dtype, specs[i].name
        if kind == "nvfp4":  # the global decode scale: a Python float or a float32 tensor
            glob = specs[i + 2]
            assert (glob.scalar and glob.dtype == "float64") or (glob.dtype == "float32" and not glob.shape)


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_metadata_returns_the_recipes_output_structure(facts):
    problem = SUITE[facts["number"]]
    outputs = facts["outputs"]
    assert problem.message.output_container == CONTAINERS[outputs["container"]]
    assert len(problem.message.outputs) == outputs["count"]
    for spec, dtype in zip(problem.message.outputs, outputs["dtypes"], strict=True):
        if dtype is not None:
            assert spec.dtype == dtype, spec.name


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_make_inputs_draws_the_recipes_full_workload(facts):
    problem = SUITE[facts["number"]]
    params = problem.workload("full").params
    inputs = problem.make_inputs("full", device="meta", seed=0)
    assert len(inputs) == len(facts["inputs"])
    for index, (x, fact, spec) in enumerate(
        zip(inputs, facts["inputs"], problem.message.inputs, strict=True)
    ):
        where = f"input {index} ({spec.name})"
        if fact["kind"] == "float":
            assert type(x) is float, where
            continue
        assert type(x) is torch.Tensor, where
        assert tuple(x.shape) == tuple(fact["shape"]) == _shape(spec, params), where
        assert str(x.dtype).removeprefix("torch.") == spec.dtype, where


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(facts):
    problem = SUITE[facts["number"]]
    params = problem.workload("full").params
    out = problem.reference(*problem.make_inputs("full", device="meta", seed=0))
    if facts["outputs"]["container"] == "tensor":
        assert type(out) is torch.Tensor
        out = [out]
    else:
        assert type(out) is tuple
    assert len(out) == len(problem.message.outputs)
    for y, spec in zip(out, problem.message.outputs, strict=True):
        assert tuple(y.shape) == _shape(spec, params), spec.name
        assert str(y.dtype).removeprefix("torch.") == spec.dtype, spec.name
