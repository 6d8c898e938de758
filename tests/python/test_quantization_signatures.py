"""The quantization problems 52-61 pose the published SOL-ExecBench recipes' signatures on their
full workload (issue 17). tests/data/quantization_signatures.json holds what the recipes show
(names, order, shapes, dtypes, Python floats, the outputs' container and count, which inputs
arrive quantised and which the reference quantises itself), written by hand from their layouts;
null marks what a recipe does not show. Checked (sol_recipe_facts.py) against each problem's
metadata, against what its make_inputs draws on the full workload and against what its reference
returns there (on the meta device: shapes and dtypes without the memory or the compute)."""

import pytest
import sol_recipe_facts as recipe

FACTS = recipe.load_facts("quantization_signatures.json")
RULES = recipe.RecipeRules(
    numbers=tuple(range(52, 62)),
    family="quantization",
    provenance_source=lambda facts: "SQ",  # posed to the recipes plus the models' configs
    notes_cite="path",
    hidden_shapes="none",  # every input's shape is shown in full
    scalar_values="optional",  # a float the recipe hides may be left to the draw
    saved_activations=False,  # the table records none
)
# What a quantised operand is made of, per format: codes, then block scales.
QUANTISED = {"fp8": ("float8_e4m3fn", "float32"), "nvfp4": ("float4_e2m1fn_x2", "float8_e4m3fn")}
UNQUANTISED = ("bfloat16", "float16", "float32")


def test_the_table_covers_the_quantization_family():
    recipe.check_table_covers_the_family(RULES, FACTS)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_metadata_poses_the_recipes_inputs_on_the_full_workload(facts):
    recipe.check_input_metadata(RULES, facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_quantised_operands_arrive_as_codes_and_scales_and_the_rest_unquantised(facts):
    """Every e4m3 / packed-e2m1 input is followed by its block scales (NVFP4: and a global decode
    scale); the inputs the reference quantises itself arrive unquantised."""
    problem = recipe.problem(facts["number"])
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


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_metadata_returns_the_recipes_output_structure(facts):
    recipe.check_output_metadata(facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_make_inputs_draws_the_recipes_full_workload(facts):
    recipe.check_full_draw(RULES, facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(facts):
    problem = recipe.problem(facts["number"])
    out = problem.reference(*problem.make_inputs("full", device="meta", seed=0))
    recipe.check_reference_outputs(facts, out)
