"""The SOL-ExecBench-derived moe problems (45-51) pose the published recipes' signatures on their
full workload (issue 17). tests/data/sol_execbench_moe_signatures.json holds the facts the recipes
show (names, order, shapes, dtypes, Python scalars, saved activations, the outputs' container and
count, the constants a problem must keep), written by hand from their visible layout; null marks
what a recipe does not show. Checked (sol_recipe_facts.py) against each problem's metadata, against
what its make_inputs draws on the full workload (on the meta device: shapes and dtypes without the
memory), and against its module's constants."""

import pytest
import sol_recipe_facts as recipe

FACTS = recipe.load_facts("sol_execbench_moe_signatures.json")
BY_NUMBER = {facts["number"]: facts for facts in FACTS}
RULES = recipe.RecipeRules(
    numbers=(45, 46, 47, 48, 49, 50, 51),
    family="moe",
    provenance_source=recipe.by_subset,
    notes_cite="file name",
    hidden_shapes="whole",  # 46 hides a whole shape; a shown shape is shown in full
    scalar_values="shown",  # the recipes show every float's value
    saved_activations=True,
)


def test_the_table_covers_every_sol_execbench_moe_problem():
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
def test_the_recipes_constants_are_kept(facts):
    # Routing margins and redraw bounds, distribution parameters: the module holds them under
    # the recipe's names, and a conditioned problem states its margin to the agent.
    recipe.check_constants(facts)
    problem = recipe.problem(facts["number"])
    if "DECISION_MARGIN" in facts["constants"]:
        margin = f"{facts['constants']['DECISION_MARGIN']:.0e}".replace("e-0", "e-")  # 1e-4
        assert (
            margin in problem.message.input_conditioning
            and "up to 16 times" in problem.message.input_conditioning
        ), f"problem {problem.number:02d}: the input conditioning does not state the margin {margin}"
        assert margin in problem.message.description, (
            f"problem {problem.number:02d}: the description does not state the margin {margin}"
        )


@pytest.mark.parametrize("number", [46, 49])
def test_reference_returns_the_metadatas_outputs_on_the_full_workload(number):
    # The two problems without large weights run their full workload on the CPU (the others'
    # outputs are checked on the small workload by test_references.py).
    problem = recipe.problem(number)
    out = problem.reference(*problem.make_inputs("full", device="cpu", seed=0))
    recipe.check_reference_outputs(BY_NUMBER[number], out)
