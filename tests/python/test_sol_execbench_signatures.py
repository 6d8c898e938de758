"""The SOL-ExecBench-derived mlp_norm problems pose the published recipes' signatures on their
full workload (issue 13, item 2). tests/data/sol_execbench_signatures.json holds the facts the
recipes show (names, order, shapes, dtypes, Python scalars, saved activations, the outputs'
container and count), written by hand from their visible layout; null marks what a recipe does
not show. Checked against each problem's metadata, against what its make_inputs draws on the
full workload, and against what its reference returns there (all on the meta device: shapes and
dtypes without the memory or the compute)."""

import json
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch

TABLE = json.loads((Path(__file__).parents[1] / "data" / "sol_execbench_signatures.json").read_text())
SUITE = {problem.number: problem for problem in mkb.load_suite()}
CONTAINERS = {"tensor": "single_tensor", "tuple": "tuple", "list": "list"}
FACTS = TABLE["problems"]


def _shape(spec, params):
    return tuple(int(d) if d.lstrip("-").isdigit() else params[d] for d in spec.shape)


def _ids(facts):
    return f"{facts['number']:02d}"


def _meta_draw(problem):
    """The full workload's inputs on the meta device. Problem 27's reference reads the values of
    grid_thw (the sizes of the image grids), which a meta tensor does not have: it gets the real
    grid, on the CPU (the reference only reads it with tolist())."""
    inputs = problem.make_inputs("full", device="meta", seed=0)
    if problem.number == 27:
        p = problem.module.WORKLOADS["full"]
        grids = problem.module.grid_geometry(p["num_patches"], p["num_grids"])
        inputs[1] = torch.tensor(grids, dtype=inputs[1].dtype)
    return inputs


def test_the_table_covers_every_sol_execbench_mlp_norm_problem():
    numbers = [facts["number"] for facts in FACTS]
    assert numbers == [27, 29, 30, 31, 32, 33, 34, 35, 37, 38, 39, 40, 41, 42, 43]
    for facts in FACTS:
        problem = SUITE[facts["number"]]
        assert facts["recipe"] == f"problems/_sol_execbench/{problem.number:02d}_{problem.slug}.json"
        assert problem.message.provenance.source == ("S1" if facts["subset"] == "L1" else "S2")
        assert facts["recipe"].rsplit("/", 1)[1] in problem.message.provenance.notes


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
            assert spec.value is not None, f"{where}: the published make_inputs passes one value"
            if fact["value"] is not None:
                assert spec.value == fact["value"], where
            continue
        assert not spec.scalar, where
        assert _shape(spec, params) == tuple(fact["shape"]), where
        if fact["dtype"] is not None:
            assert spec.dtype == fact["dtype"], where
        # A saved activation says so where the agent reads the inputs table.
        assert spec.description.startswith("saved ") == fact["saved_activation"], where


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
            assert type(x) is float and x == spec.value, where
            continue
        assert type(x) is torch.Tensor, where
        assert tuple(x.shape) == tuple(fact["shape"]) == _shape(spec, params), where
        assert str(x.dtype).removeprefix("torch.") == spec.dtype, where


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(facts):
    problem = SUITE[facts["number"]]
    params = problem.workload("full").params
    out = problem.reference(*_meta_draw(problem))
    if facts["outputs"]["container"] == "tensor":
        assert type(out) is torch.Tensor
        out = [out]
    else:
        assert type(out) is tuple
    assert len(out) == len(problem.message.outputs)
    for y, spec in zip(out, problem.message.outputs, strict=True):
        assert tuple(y.shape) == _shape(spec, params), spec.name
        assert str(y.dtype).removeprefix("torch.") == spec.dtype, spec.name
