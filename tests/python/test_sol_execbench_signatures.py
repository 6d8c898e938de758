"""The SOL-ExecBench-derived mlp_norm problems pose the published recipes' signatures on their
full workload (issue 13, item 2). tests/data/sol_execbench_signatures.json holds the facts the
recipes show (names, order, shapes, dtypes, Python scalars, saved activations, the outputs'
container and count), written by hand from their visible layout; null marks what a recipe does
not show. Checked (sol_recipe_facts.py) against each problem's metadata, against what its
make_inputs draws on the full workload, and against what its reference returns there (all on the
meta device: shapes and dtypes without the memory or the compute)."""

import pytest
import sol_recipe_facts as recipe
import torch

FACTS = recipe.load_facts("sol_execbench_signatures.json")
RULES = recipe.RecipeRules(
    numbers=(27, 29, 30, 31, 32, 33, 34, 35, 37, 38, 39, 40, 41, 42, 43),
    family="mlp_norm",
    provenance_source=recipe.by_subset,
    notes_cite="file name",
    hidden_shapes="none",  # every input's shape is shown in full
    scalar_values="passed",  # some values are hidden (27, 35, 42), but each problem passes one
    saved_activations=True,
)


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
    recipe.check_table_covers_the_family(RULES, FACTS)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_metadata_poses_the_recipes_inputs_on_the_full_workload(facts):
    recipe.check_input_metadata(RULES, facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_metadata_returns_the_recipes_output_structure(facts):
    recipe.check_output_metadata(facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_make_inputs_draws_the_recipes_full_workload(facts):
    recipe.check_full_draw(RULES, facts)


@pytest.mark.parametrize("facts", FACTS, ids=recipe.fact_id)
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(facts):
    problem = recipe.problem(facts["number"])
    recipe.check_reference_outputs(facts, problem.reference(*_meta_draw(problem)))
