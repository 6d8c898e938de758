"""Every problem of ours that the published harness ships as a file is posed as the published one
is, on the full workload: the same positional inputs (names, order, tensor or Python scalar,
shapes, dtypes, fixed scalar values), the same output structure, shapes and dtypes, and the same
inputs updated in place. The facts are one H200 draw of each published file
(tests/data/published-problem-facts.json, a copy of the project's shared facts)."""

import json
import math
from pathlib import Path

import metakernelbench as mkb
import pytest
import torch
from metakernelbench import _core
from metakernelbench.judge import values

FACTS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "published-problem-facts.json").read_text()
)
SUITE = mkb.load_suite()
OURS = {p.number for p in SUITE}
PUBLISHED = [f for f in FACTS["problems"] if f["number"] in OURS]
CONTAINERS = {"tuple": "tuple", "list": "list", "tensor": "single_tensor"}


def _facts_id(facts):
    return f"{facts['number']:02d}"


def test_the_facts_cover_the_re_posed_problems():
    # 01-09, 14-26, 28, 36 and 68-74 are shipped published files; each must be checked here.
    attention = {1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15, 16, 17, 18}
    assert attention | {19, 20, 21, 22, 23, 24, 25, 26, 28, 36} <= {f["number"] for f in PUBLISHED}
    assert {68, 69, 70, 71, 72, 73, 74} <= {f["number"] for f in PUBLISHED}


# A full draw larger than this is drawn on the meta device (shapes and dtypes without the memory;
# 03 and 06 hold 8 GB of cache): make_inputs of those problems must work there.
CPU_DRAW_LIMIT_BYTES = 1 << 30


def _full_draw_device(problem) -> str:
    specs = [s for s in problem.message.inputs if not s.scalar]
    sizes = [math.prod(hi for _, hi in problem.dimensions(s, "full")) * values.DTYPES[s.dtype].itemsize
             for s in specs]
    return "meta" if sum(sizes) > CPU_DRAW_LIMIT_BYTES else "cpu"


def _input_mismatches(problem, facts) -> list[str]:
    specs = list(problem.message.inputs)
    out = []
    if [s.name for s in specs] != [i["name"] for i in facts["inputs"]]:
        out.append(
            f"input names {[s.name for s in specs]} != published {[i['name'] for i in facts['inputs']]}"
        )
        return out
    for spec, fact in zip(specs, facts["inputs"]):
        if fact["kind"] == "tensor":
            if spec.scalar:
                out.append(f"{spec.name}: a scalar here, a tensor in the published file")
                continue
            if spec.dtype != fact["dtype"]:
                out.append(f"{spec.name}: dtype {spec.dtype} != published {fact['dtype']}")
            if not problem.shape_fits(fact["shape"], spec, "full"):
                out.append(
                    f"{spec.name}: shape {problem.dimensions(spec, 'full')} does not admit {fact['shape']}"
                )
        else:
            if not spec.scalar or _core.python_scalar_type(spec.dtype) != fact["kind"]:
                out.append(
                    f"{spec.name}: a Python {fact['kind']} in the published file, "
                    f"here {'a ' + spec.dtype + ' scalar' if spec.scalar else 'a tensor'}"
                )
            elif spec.value is not None and spec.value != fact["value"]:
                out.append(f"{spec.name}: fixed at {spec.value}, published {fact['value']}")
    return out


def _output_mismatches(problem, facts) -> list[str]:
    out, published = [], facts["output"]
    container = problem.message.output_container
    if CONTAINERS[published["kind"]] != container:
        return [f"returns a {container}, the published reference a {published['kind']}"]
    items = published["items"] if published["kind"] != "tensor" else [published]
    specs = list(problem.message.outputs)
    if len(items) != len(specs):
        return [f"{len(specs)} outputs, published {len(items)}"]
    for spec, item in zip(specs, items):
        if item["kind"] != "tensor":
            out.append(f"{spec.name}: the published output is a {item['kind']}")
        elif spec.dtype != item["dtype"] or not problem.shape_fits(item["shape"], spec, "full"):
            out.append(
                f"{spec.name}: {spec.dtype}{problem.dimensions(spec, 'full')}, "
                f"published {item['dtype']}{item['shape']}"
            )
    return out


@pytest.mark.parametrize("facts", PUBLISHED, ids=_facts_id)
def test_signature_matches_the_published_file(facts):
    problem = SUITE.find(facts["number"])
    assert problem.slug == facts["slug"] and problem.family == facts["family"]
    mismatches = _input_mismatches(problem, facts) + _output_mismatches(problem, facts)
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("facts", PUBLISHED, ids=_facts_id)
def test_in_place_inputs_match_the_published_file(facts):
    problem = SUITE.find(facts["number"])
    ours = [i for i, spec in enumerate(problem.message.inputs) if spec.in_place]
    assert ours == [m["index"] for m in facts["mutated_inputs"]]


@pytest.mark.parametrize("facts", PUBLISHED, ids=_facts_id)
def test_a_full_draw_on_the_cpu_has_the_published_signature(facts):
    # reference.py's make_inputs("full") itself, not only the metadata.
    problem = SUITE.find(facts["number"])
    inputs = problem.make_inputs("full", device=_full_draw_device(problem), seed=0)
    assert len(inputs) == len(facts["inputs"])
    for x, fact in zip(inputs, facts["inputs"]):
        if fact["kind"] == "tensor":
            assert isinstance(x, torch.Tensor), fact["name"]
            assert str(x.dtype).removeprefix("torch.") == fact["dtype"], fact["name"]
            assert problem.shape_fits(x.shape, problem.message.inputs[fact["index"]], "full"), fact["name"]
        else:
            assert type(x).__name__ == fact["kind"] and x == fact["value"], fact["name"]


def test_the_check_catches_a_changed_signature(tmp_path):
    # The comparison above must fail on a problem that differs from the published one.
    facts = next(f for f in PUBLISHED if f["number"] == 2)
    text = (SUITE.find(2).directory / "problem.textproto").read_text()
    changed = _core.parse_problem(
        text.replace("value: 0.08838834764831843", "value: 0.125").replace(
            'shape: "batch+1"', 'shape: "batch"'
        ),
        "02",
    )

    class View:
        message = changed
        shape_fits = SUITE.find(2).shape_fits
        dimensions = SUITE.find(2).dimensions

    mismatches = _input_mismatches(View, facts)
    assert any("sm_scale: fixed at 0.125" in m for m in mismatches)
    assert any(m.startswith("kv_indptr: shape") for m in mismatches)
