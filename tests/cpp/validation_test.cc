#include "libmkb/model/validation.h"

#include <catch2/catch_test_macros.hpp>
#include <limits>
#include <string>

#include "google/protobuf/text_format.h"
#include "libmkb/model/defaults.h"

namespace {

mkb::v1::Problem ValidProblem() {
  mkb::v1::Problem problem;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        slug: "toy_add_bf16"
        number: 99
        family: MLP_NORM
        title: "toy"
        description: "adds"
        provenance { source: "custom" model: "none" license: "Apache-2.0" }
        inputs { name: "a" dtype: BFLOAT16 shape: "n" }
        outputs { name: "out" dtype: BFLOAT16 shape: "n" }
        output_container: SINGLE_TENSOR
        workloads {
          name: "full"
          description: "big"
          params { key: "n" value: 1024 }
          roofline { flops: 1024 min_bytes: 4096 derivation: "one add" }
          peak_memory_bytes: 65536
        }
        workloads {
          name: "small"
          description: "small"
          params { key: "n" value: 8 }
          roofline { flops: 8 min_bytes: 32 derivation: "one add" }
          peak_memory_bytes: 512
        }
      )pb",
      &problem));
  return problem;
}

std::string FieldPath(const absl::Status& status) {
  return mkb::FieldPathOf(status).value_or("<none>");
}

}  // namespace

TEST_CASE("a complete problem validates") { CHECK(mkb::ValidateProblem(ValidProblem()).ok()); }

TEST_CASE("problem errors name the offending field") {
  auto problem = ValidProblem();

  SECTION("missing slug") {
    problem.clear_slug();
    auto status = mkb::ValidateProblem(problem);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(FieldPath(status) == "slug");
  }
  SECTION("bad slug") {
    problem.set_slug("Toy-Add");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "slug");
  }
  SECTION("missing family") {
    problem.clear_family();
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "family");
  }
  SECTION("roofline bytes must be positive") {
    problem.mutable_workloads(1)->mutable_roofline()->set_min_bytes(0);
    auto status = mkb::ValidateProblem(problem);
    CHECK(FieldPath(status) == "workloads[1].roofline.min_bytes");
    CHECK(status.message().rfind("workloads[1].roofline.min_bytes: ", 0) == 0);
  }
  SECTION("a small workload is required") {
    problem.mutable_workloads()->RemoveLast();
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "workloads");
  }
  SECTION("shape names must be workload parameters") {
    problem.mutable_outputs(0)->set_shape(0, "m");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "outputs[0].shape[0]");
  }
  SECTION("a single-tensor container has one output") {
    *problem.add_outputs() = problem.outputs(0);
    problem.mutable_outputs(1)->set_name("other");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "output_container");
  }
  SECTION("loader fields may not be written") {
    problem.set_fingerprint("abc");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "fingerprint");
  }
  SECTION("a varying parameter's minimum lies within its range") {
    (*problem.mutable_workloads(0)->mutable_param_minimums())["n"] = 512;
    CHECK(mkb::ValidateProblem(problem).ok());
    (*problem.mutable_workloads(0)->mutable_param_minimums())["n"] = 2048;
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "workloads[0].param_minimums[\"n\"]");
    problem.mutable_workloads(0)->mutable_param_minimums()->clear();
    (*problem.mutable_workloads(0)->mutable_param_minimums())["m"] = 1;
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "workloads[0].param_minimums[\"m\"]");
  }
  SECTION("in_place is for inputs") {
    problem.mutable_outputs(0)->set_in_place(true);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "outputs[0].in_place");
  }
}

TEST_CASE("scalar inputs: a Python number, no tensor fields") {
  auto problem = ValidProblem();
  mkb::v1::TensorSpec* scale = problem.add_inputs();
  scale->set_name("sm_scale");
  scale->set_dtype(mkb::v1::FLOAT64);
  scale->set_scalar(true);
  scale->set_value(0.125);
  CHECK(mkb::ValidateProblem(problem).ok());

  SECTION("an int and a bool scalar, fixed or drawn") {
    mkb::v1::TensorSpec* offset = problem.add_inputs();
    offset->set_name("offset");
    offset->set_dtype(mkb::v1::INT64);
    offset->set_scalar(true);
    offset->set_value(32);
    mkb::v1::TensorSpec* flag = problem.add_inputs();
    flag->set_name("flag");
    flag->set_dtype(mkb::v1::BOOL);
    flag->set_scalar(true);
    CHECK(mkb::ValidateProblem(problem).ok());
  }
  SECTION("a scalar has no shape") {
    scale->add_shape("n");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].shape");
  }
  SECTION("a scalar's dtype is a Python type's") {
    scale->set_dtype(mkb::v1::FLOAT32);
    auto status = mkb::ValidateProblem(problem);
    CHECK(FieldPath(status) == "inputs[1].dtype");
    CHECK(status.message().find("FLOAT64 (a Python float)") != std::string::npos);
  }
  SECTION("a scalar is not updated in place") {
    scale->set_in_place(true);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].in_place");
  }
  SECTION("exact is for tensor outputs") {
    scale->set_exact(true);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].exact");
  }
  SECTION("an INT64 value is integral") {
    scale->set_dtype(mkb::v1::INT64);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].value");
  }
  SECTION("a BOOL value is 0 or 1") {
    scale->set_dtype(mkb::v1::BOOL);
    scale->set_value(2);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].value");
  }
  SECTION("a value must be finite") {
    scale->set_value(std::numeric_limits<double>::infinity());
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].value");
  }
  SECTION("a value belongs to a scalar") {
    scale->set_scalar(false);
    scale->add_shape("n");
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "inputs[1].value");
  }
  SECTION("outputs are tensors") {
    problem.mutable_outputs(0)->set_scalar(true);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "outputs[0].scalar");
  }
}

TEST_CASE("budgets and experiments") {
  CHECK(mkb::ValidateBudget(mkb::WithDefaults(mkb::v1::Budget())).ok());
  mkb::v1::Budget budget;
  budget.set_max_submissions(-1);
  CHECK(FieldPath(mkb::ValidateBudget(budget)) == "max_submissions");

  mkb::v1::ExperimentSpec spec;
  spec.set_name("e");
  spec.set_model("scripted/demo");
  CHECK(mkb::ValidateExperimentSpec(mkb::WithDefaults(spec)).ok());
  auto with_arms = mkb::WithDefaults(spec);
  with_arms.mutable_arms(2)->mutable_skill()->set_arm("solo_missing");
  CHECK(FieldPath(mkb::ValidateExperimentSpec(with_arms)) == "arms[2].skill.arm");
  with_arms = mkb::WithDefaults(spec);
  with_arms.mutable_budget()->set_agent_seconds(-5);
  CHECK(FieldPath(mkb::ValidateExperimentSpec(with_arms)) == "budget.agent_seconds");
}

TEST_CASE("the standard arms pair each skill arm with its source and base") {
  auto arms = mkb::StandardArms();
  REQUIRE(arms.size() == 4);
  CHECK(arms[2].name() == "cutedsl2tirx_skill");
  CHECK(arms[2].dsl() == mkb::v1::TIRX);
  CHECK(arms[2].skill().arm() == "solo_cutedsl");
  CHECK(arms[2].base_arm() == "solo_tirx");
  CHECK(arms[3].skill().arm() == "solo_tirx");
  CHECK(arms[3].base_arm() == "solo_cutedsl");
}

TEST_CASE("stats config defaults are the paper's constants") {
  auto config = mkb::WithDefaults(mkb::v1::StatsConfig());
  CHECK(config.clip_low() == 1.0 / 16);
  CHECK(config.clip_high() == 16.0);
  CHECK(config.failure_floor() == 1.0 / 32);
  CHECK(config.thresholds_size() == 5);
  CHECK(mkb::ValidateStatsConfig(config).ok());
  config.set_clip_low(32);
  CHECK(FieldPath(mkb::ValidateStatsConfig(config)) == "clip_high");
}
