"""The SOL-ExecBench-derived linear_attention problems (62-67) pose the published recipes'
signatures on their full workload. tests/data/sol_execbench_linear_attention_signatures.json
holds the facts the recipes show (positional inputs with their shapes and dtypes, Python floats,
the constants, the outputs' container, count and cast dtypes), written by hand from their
visible layout; null marks what a recipe does not show. Checked (sol_recipe_facts.py) against
each problem's metadata, against what its make_inputs draws on the full workload and against what
its reference returns there (on the meta device: shapes and dtypes without the memory or the
compute)."""

import pytest
import sol_recipe_facts as recipe

FACTS = recipe.load_facts("sol_execbench_linear_attention_signatures.json")
RULES = recipe.RecipeRules(
    numbers=(62, 63, 64, 65, 66, 67),
    family="linear_attention",
    provenance_source=recipe.by_subset,
    notes_cite="file name",
    hidden_shapes="extents",  # 67 hides a whole shape, 63, 65 and 67 single extents
    scalar_values="passed",  # 67 hides a value, but each problem passes one
    saved_activations=False,  # the table records none
)


def test_the_table_covers_every_sol_execbench_linear_attention_problem():
    recipe.check_table_covers_the_family(RULES, FACTS)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_metadata_poses_the_recipes_inputs_on_the_full_workload(facts):
    recipe.check_input_metadata(RULES, facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_reference_keeps_the_recipes_constants(facts):
    recipe.check_constants(facts)


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
