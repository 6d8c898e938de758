"""metakernelbench.load_suite and Problem: metadata from the C++ loader, reference code."""

import math

import pytest

import metakernelbench as mkb


def test_load_suite_repr_lists_families(suite):
    assert len(suite) >= 3
    text = repr(suite)
    assert "mlp_norm" in text and "kv_cache" in text and "attention" in text


def test_default_suite_is_the_checkout():
    assert (mkb.default_suite_root() / "mlp_norm").is_dir()
    assert len(mkb.load_suite()) >= 3


def test_find_by_slug_and_number(suite):
    p = suite.find("fused_add_rmsnorm_h4096_llama31_8b_bf16")
    assert p.number == 28 and p.family == "mlp_norm"
    assert suite.find(28) is p and suite.find("28") is p
    assert suite.find("02").slug == "gqa_paged_decode_h5_kv1_d128_ps1_bf16"


def test_unknown_problem_raises_not_found_with_suggestion(suite):
    with pytest.raises(mkb.NotFoundError, match="did you mean"):
        suite.find("fused_add_rmsnorm")
    with pytest.raises(LookupError):
        suite.find("no_such_problem_anywhere_at_all")


def test_select_by_family_and_glob(suite):
    kv = suite.select(families=["kv_cache"])
    assert 25 in [p.number for p in kv] and {p.family for p in kv} == {"kv_cache"}
    assert {p.number for p in suite.select(globs=["*rmsnorm*", "02"])} >= {28, 2}
    with pytest.raises(mkb.InvalidArgumentError, match="unknown family 'mlp'"):
        suite.select(families=["mlp"])


def test_roofline_and_workloads(suite):
    p = suite.find(28)
    assert p.workload_names == ["full", "small"]
    assert p.roofline("full") == {"flops": 297144320.0, "min_bytes": 356581376.0}
    assert p.workload("full").params["num_tokens"] == 14509
    with pytest.raises(mkb.NotFoundError, match="no workload 'medium'"):
        p.workload("medium")


def test_problem_message_is_read_only(suite):
    p = suite.find(28)
    with pytest.raises(AttributeError):
        p.message.slug = "other"
    with pytest.raises(AttributeError, match="no field 'colour'"):
        p.message.colour


def test_malformed_problem_error_names_file_and_line(scratch_suite):
    path = next(scratch_suite.glob("mlp_norm/28_*/problem.textproto"))
    text = path.read_text().replace("title:", 'colour: "red"\ntitle:', 1)
    path.write_text(text)
    line = text[: text.index("colour")].count("\n") + 1
    with pytest.raises(mkb.InvalidArgumentError) as error:
        mkb.load_suite(scratch_suite)
    message = str(error.value)
    assert message.startswith(f"{path}:{line}:")
    assert "\n" not in message


def test_fingerprint_changes_with_the_reference(scratch_suite):
    before = mkb.load_suite(scratch_suite).find(28).fingerprint
    ref = next(scratch_suite.glob("mlp_norm/28_*/reference.py"))
    ref.write_text(ref.read_text() + "\n# edited\n")
    after = mkb.load_suite(scratch_suite).find(28).fingerprint
    assert before != after and len(after) == 64


def test_messages_from_dicts_are_validated():
    budget = mkb.message("Budget", {"max_submissions": 5})
    assert budget.max_submissions == 5 and budget.type_name == "Budget"
    with pytest.raises(mkb.InvalidArgumentError, match="max_submissions: must be >= 0"):
        mkb.message("Budget", {"max_submissions": -1})
    with pytest.raises(mkb.InvalidArgumentError, match="agent_seconds: expected a number, got str"):
        mkb.message("Budget", {"agent_seconds": "long"})
    with pytest.raises(mkb.InvalidArgumentError, match="arms\\[0\\].dsl: 'cuda' is not one of cutedsl, tirx"):
        mkb.message("ExperimentSpec", {"name": "x", "model": "m", "arms": [{"name": "a", "dsl": "cuda"}]})


def test_message_round_trips(suite):
    import pickle

    p = suite.find(2).message
    assert pickle.loads(pickle.dumps(p)) == p
    assert mkb.parse_message("Problem", p.serialize()) == p
    assert '"slug": "gqa_paged_decode_h5_kv1_d128_ps1_bf16"' in p.to_json(indent=2)
    assert p.to_dict()["outputs"][1]["dtype"] == "float32"


def test_defaults_match_the_spec():
    b = mkb.default_budget()
    assert (b.agent_seconds, b.max_submissions, b.max_kernel_bytes) == (2400.0, 10, 300000)
    assert [a.name for a in mkb.standard_arms()] == [
        "solo_cutedsl", "solo_tirx", "cutedsl2tirx_skill", "tirx2cutedsl_skill"]
    pins = {p.name: p.version for p in mkb.default_toolchain("cutedsl")}
    assert pins == {"nvidia-cutlass-dsl[cu13]": "4.7.0", "apache-tvm-ffi": "0.1.12"}
    assert math.isclose(mkb.message("StatsConfig").to_dict()["clip_low"], 0.0)
