"""The SOL-ExecBench-derived moe problems (45-51) pose the published recipes' signatures on their
full workload (issue 17). tests/data/sol_execbench_moe_signatures.json holds the facts the recipes
show (names, order, shapes, dtypes, Python scalars, saved activations, the outputs' container and
count, the constants a problem must keep), written by hand from their visible layout; null marks
what a recipe does not show. Checked against each problem's metadata, against what its
make_inputs draws on the full workload (on the meta device: shapes and dtypes without the memory),
and against its module's constants."""

import json
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch

TABLE = json.loads((Path(__file__).parents[1] / "data" / "sol_execbench_moe_signatures.json").read_text())
SUITE = {problem.number: problem for problem in mkb.load_suite()}
CONTAINERS = {"tensor": "single_tensor", "tuple": "tuple", "list": "list"}
FACTS = TABLE["problems"]


def _shape(spec, params):
    return tuple(int(d) if d.lstrip("-").isdigit() else params[d] for d in spec.shape)


def _ids(facts):
    return f"{facts['number']:02d}"


def test_the_table_covers_every_sol_execbench_moe_problem():
    assert [facts["number"] for facts in FACTS] == [45, 46, 47, 48, 49, 50, 51]
    for facts in FACTS:
        problem = SUITE[facts["number"]]
        assert facts["recipe"] == f"problems/_sol_execbench/{problem.number:02d}_{problem.slug}.json"
        assert problem.family == "moe"
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
            assert spec.value == fact["value"], where
            continue
        assert not spec.scalar, where
        if fact["shape"] is not None:
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
            assert type(x) is float and x == spec.value == fact["value"], where
            continue
        assert type(x) is torch.Tensor, where
        assert tuple(x.shape) == _shape(spec, params), where
        if fact["shape"] is not None:
            assert tuple(x.shape) == tuple(fact["shape"]), where
        assert str(x.dtype).removeprefix("torch.") == spec.dtype, where


@pytest.mark.parametrize("facts", FACTS, ids=_ids)
def test_the_recipes_constants_are_kept(facts):
    # Routing margins and redraw bounds, distribution parameters: the module holds them under
    # the recipe's names, and a conditioned problem states its margin to the agent.
    problem = SUITE[facts["number"]]
    for name, value in facts["constants"].items():
        assert getattr(problem.module, name) == value, name
    if "DECISION_MARGIN" in facts["constants"]:
        margin = f"{facts['constants']['DECISION_MARGIN']:.0e}".replace("e-0", "e-")  # 1e-4
        assert (
            margin in problem.message.input_conditioning
            and "up to 16 times" in problem.message.input_conditioning
        )
        assert margin in problem.message.description


@pytest.mark.parametrize("number", [46, 49])
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(number):
    # The two problems without large weights run their full workload on the CPU (the others'
    # outputs are checked on the small workload by test_references.py).
    problem = SUITE[number]
    params = problem.workload("full").params
    out = problem.reference(*problem.make_inputs("full", device="cpu", seed=0))
    assert type(out) is tuple and len(out) == len(problem.message.outputs)
    for y, spec in zip(out, problem.message.outputs, strict=True):
        assert tuple(y.shape) == _shape(spec, params), spec.name
        assert str(y.dtype).removeprefix("torch.") == spec.dtype, spec.name
