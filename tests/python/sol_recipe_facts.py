"""The checks the SOL-ExecBench recipe-fact tables share (tests/data/sol_execbench_*signatures.json,
tests/data/quantization_signatures.json). Each table records, by hand from a published recipe's
visible layout, one entry per problem: its inputs (names, order, shapes, dtypes, Python floats), its
outputs (container, count, dtypes) and, where the recipe has them, the constants the problem keeps;
null marks what a recipe does not show. The checks below compare one entry with the problem's
metadata, with what its make_inputs draws on the full workload (on the meta device: shapes and
dtypes without the memory) and with what its reference returns there.

What differs between the families (how much a table may hide, whether the problem must pass each
Python float, which provenance it cites, whether inputs are saved activations) is a RecipeRules
value that each test file spells out; what a single family adds (problem 27's real grid, the moe
decision margin, the quantised operands' layout) stays in that family's file. Every failure names
the problem, the field and the values that disagree."""

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import metakernelbench as mkb
import torch

DATA = Path(__file__).parents[1] / "data"
# A table's name for the outputs' container -> (the metadata's output_container, the reference's
# Python type for it).
CONTAINERS = {
    "tensor": ("single_tensor", torch.Tensor),
    "tuple": ("tuple", tuple),
    "list": ("list", list),
}


@dataclass(frozen=True)
class RecipeRules:
    """What one family's table may leave out and what its problems must show.

    numbers: every problem of the family, in table order.
    family: the problems' family (problem.family and its metadata's family).
    provenance_source: the provenance source a table entry's problem cites (by_subset, or a constant).
    notes_cite: what of the recipe the provenance notes name: its "file name" or its whole "path".
    hidden_shapes: what of a tensor's shape the table may hide (null): "none" (every shape shown in
        full), "whole" (a whole shape may be null; a shown shape is shown in full) or "extents"
        (a whole shape or any of its extents may be null).
    scalar_values: "shown" (the table records every Python float's value and the problem passes it),
        "passed" (the problem passes one value for each; the table records it where the recipe shows
        it) or "optional" (the problem may leave a value to be drawn; checked where either records one).
    saved_activations: whether the table says which inputs are saved activations (inputs whose
        description then starts with "saved ").
    """

    numbers: tuple[int, ...]
    family: str
    provenance_source: Callable[[dict], str]
    notes_cite: Literal["file name", "path"]
    hidden_shapes: Literal["none", "whole", "extents"]
    scalar_values: Literal["shown", "passed", "optional"]
    saved_activations: bool


def load_facts(table: str) -> list[dict]:
    """The per-problem entries of tests/data/<table>."""
    return json.loads((DATA / table).read_text())["problems"]


def fact_id(facts: dict) -> str:
    """The pytest id of a table entry: its problem number."""
    return f"{facts['number']:02d}"


def by_subset(facts: dict) -> str:
    """SOL-ExecBench's L1 subset is provenance source S1, L2 is S2."""
    return "S1" if facts["subset"] == "L1" else "S2"


@functools.cache
def _suite() -> dict:
    return {problem.number: problem for problem in mkb.load_suite()}


def problem(number: int):
    """The shipped problem with this number (the suite is loaded once per test session)."""
    return _suite()[number]


def _shape(spec, params) -> tuple:
    # A metadata extent is a literal (possibly negative) or the name of a workload parameter.
    return tuple(int(d) if d.lstrip("-").isdigit() else params[d] for d in spec.shape)


def _dtype(x: torch.Tensor) -> str:
    return str(x.dtype).removeprefix("torch.")


def _check_recipe_shape(rules: RecipeRules, where: str, what: str, shape: tuple, recipe_shape) -> None:
    """shape (what: "posed" by the metadata or "drawn" by make_inputs) against the table's, as far as
    the recipe shows it."""
    if recipe_shape is None:
        assert rules.hidden_shapes != "none", (
            f"{where}: the table hides the shape, but {rules.family} recipes show every shape"
        )
        return
    if None in recipe_shape:
        assert rules.hidden_shapes == "extents", (
            f"{where}: the table hides extents of {recipe_shape}, but {rules.family} recipes show "
            "every extent of a shown shape"
        )
    assert len(shape) == len(recipe_shape) and all(
        shown is None or extent == shown for extent, shown in zip(shape, recipe_shape, strict=True)
    ), f"{where}: {what} shape {shape}, the recipe's {tuple(recipe_shape)} (None: not shown)"


def _check_kind(where: str, fact: dict) -> None:
    assert fact["kind"] in ("tensor", "float"), (
        f"{where}: the table's kind {fact['kind']!r}, not tensor/float"
    )


def check_table_covers_the_family(rules: RecipeRules, table: list[dict]) -> None:
    """The table has one entry per problem of the family, each naming its recipe as the problem's
    provenance does."""
    numbers = [facts["number"] for facts in table]
    assert numbers == list(rules.numbers), f"the table's problems {numbers}, the family's {rules.numbers}"
    for facts in table:
        p = problem(facts["number"])
        where = f"problem {p.number:02d}"
        assert p.family == rules.family, f"{where}: family {p.family!r}, not {rules.family!r}"
        assert p.message.family == rules.family, (
            f"{where}: metadata family {p.message.family!r}, not {rules.family!r}"
        )
        recipe = f"problems/_sol_execbench/{p.number:02d}_{p.slug}.json"
        assert facts["recipe"] == recipe, f"{where}: the table's recipe {facts['recipe']!r}, not {recipe!r}"
        source = p.message.provenance.source
        assert source == rules.provenance_source(facts), (
            f"{where}: provenance source {source!r}, not {rules.provenance_source(facts)!r}"
        )
        cited = facts["recipe"] if rules.notes_cite == "path" else facts["recipe"].rsplit("/", 1)[1]
        assert cited in p.message.provenance.notes, f"{where}: the provenance notes do not name {cited!r}"


def check_input_metadata(rules: RecipeRules, facts: dict) -> None:
    """The metadata poses the recipe's inputs on the full workload: count, names, order, Python floats
    (and their values), shapes, dtypes and, where the family says so, the saved activations."""
    p = problem(facts["number"])
    params = p.workload("full").params
    specs = list(p.message.inputs)
    assert len(specs) == len(facts["inputs"]), (
        f"problem {p.number:02d}: {len(specs)} inputs, the recipe's {len(facts['inputs'])}"
    )
    for index, (spec, fact) in enumerate(zip(specs, facts["inputs"], strict=True)):
        where = f"problem {p.number:02d} input {index} ({spec.name})"
        _check_kind(where, fact)
        if fact["name"] is not None:
            assert spec.name == fact["name"], f"{where}: named {spec.name!r}, the recipe's {fact['name']!r}"
        if fact["kind"] == "float":
            assert spec.scalar and spec.dtype == "float64", (
                f"{where}: the recipe passes a Python float; scalar={spec.scalar} dtype={spec.dtype}"
            )
            if rules.scalar_values == "shown":
                assert fact["value"] is not None, f"{where}: the table hides a value, which the recipes show"
            if rules.scalar_values != "optional":
                assert spec.value is not None, f"{where}: the published make_inputs passes one value"
            if fact["value"] is not None:
                assert spec.value == fact["value"], f"{where}: {spec.value}, the recipe's {fact['value']}"
            continue
        assert not spec.scalar, f"{where}: the recipe passes a tensor, the metadata a scalar"
        _check_recipe_shape(rules, where, "posed", _shape(spec, params), fact["shape"])
        if fact["dtype"] is not None:
            assert spec.dtype == fact["dtype"], f"{where}: dtype {spec.dtype}, the recipe's {fact['dtype']}"
        if rules.saved_activations:
            # A saved activation says so where the agent reads the inputs table.
            saved = spec.description.startswith("saved ")
            assert saved == fact["saved_activation"], (
                f"{where}: the description {'says' if saved else 'does not say'} 'saved ', "
                f"the recipe's saved_activation is {fact['saved_activation']}"
            )


def check_output_metadata(facts: dict) -> None:
    """The metadata returns the recipe's output container, count and (where shown) dtypes."""
    p = problem(facts["number"])
    outputs = facts["outputs"]
    container = CONTAINERS[outputs["container"]][0]
    assert p.message.output_container == container, (
        f"problem {p.number:02d}: output_container {p.message.output_container}, the recipe's {container}"
    )
    assert len(p.message.outputs) == outputs["count"], (
        f"problem {p.number:02d}: {len(p.message.outputs)} outputs, the recipe's {outputs['count']}"
    )
    for index, (spec, dtype) in enumerate(zip(p.message.outputs, outputs["dtypes"], strict=True)):
        if dtype is not None:
            assert spec.dtype == dtype, (
                f"problem {p.number:02d} output {index} ({spec.name}): {spec.dtype}, the recipe's {dtype}"
            )


def check_full_draw(rules: RecipeRules, facts: dict) -> None:
    """make_inputs draws, on the full workload and the meta device, what the metadata and the recipe
    say: a Python float (its value) or a tensor of the metadata's shape (the recipe's, as far as it
    shows it) and dtype."""
    p = problem(facts["number"])
    params = p.workload("full").params
    inputs = p.make_inputs("full", device="meta", seed=0)
    assert len(inputs) == len(facts["inputs"]), (
        f"problem {p.number:02d}: make_inputs draws {len(inputs)} inputs, the recipe's {len(facts['inputs'])}"
    )
    for index, (x, fact, spec) in enumerate(zip(inputs, facts["inputs"], p.message.inputs, strict=True)):
        where = f"problem {p.number:02d} input {index} ({spec.name})"
        _check_kind(where, fact)
        if fact["kind"] == "float":
            assert type(x) is float, f"{where}: drawn as {type(x).__name__}, the recipe's float"
            if rules.scalar_values != "optional" or spec.value is not None:
                assert x == spec.value, f"{where}: drawn {x}, the metadata's value {spec.value}"
            if fact["value"] is not None:
                assert x == fact["value"], f"{where}: drawn {x}, the recipe's value {fact['value']}"
            continue
        assert type(x) is torch.Tensor, f"{where}: drawn as {type(x).__name__}, the recipe's tensor"
        shape = tuple(x.shape)
        posed = _shape(spec, params)
        assert shape == posed, f"{where}: drawn shape {shape}, the metadata's {posed}"
        _check_recipe_shape(rules, where, "drawn", shape, fact["shape"])
        assert _dtype(x) == spec.dtype, f"{where}: drawn dtype {_dtype(x)}, the metadata's {spec.dtype}"


def check_reference_outputs(facts: dict, out) -> None:
    """out, what the problem's reference returned on a full-workload draw, is the recipe's container
    holding the metadata's outputs (their shapes on the full workload and their dtypes)."""
    p = problem(facts["number"])
    params = p.workload("full").params
    python_type = CONTAINERS[facts["outputs"]["container"]][1]
    assert type(out) is python_type, (
        f"problem {p.number:02d}: the reference returns a {type(out).__name__}, "
        f"the recipe's container is a {python_type.__name__}"
    )
    if python_type is torch.Tensor:
        out = [out]
    assert len(out) == len(p.message.outputs), (
        f"problem {p.number:02d}: the reference returns {len(out)} outputs, "
        f"the metadata has {len(p.message.outputs)}"
    )
    for index, (y, spec) in enumerate(zip(out, p.message.outputs, strict=True)):
        where = f"problem {p.number:02d} output {index} ({spec.name})"
        assert tuple(y.shape) == _shape(spec, params), (
            f"{where}: shape {tuple(y.shape)}, the metadata's {_shape(spec, params)}"
        )
        assert _dtype(y) == spec.dtype, f"{where}: dtype {_dtype(y)}, the metadata's {spec.dtype}"


def check_constants(facts: dict) -> None:
    """The problem's module keeps the recipe's constants under the recipe's names."""
    p = problem(facts["number"])
    for name, value in facts["constants"].items():
        assert hasattr(p.module, name), f"problem {p.number:02d}: the module has no constant {name}"
        kept = getattr(p.module, name)
        assert kept == value, f"problem {p.number:02d}: {name} is {kept}, the recipe's {value}"
