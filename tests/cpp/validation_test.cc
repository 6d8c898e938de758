#include "libmkb/model/validation.h"

#include <catch2/catch_test_macros.hpp>
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
  SECTION("in_place is for inputs") {
    problem.mutable_outputs(0)->set_in_place(true);
    CHECK(FieldPath(mkb::ValidateProblem(problem)) == "outputs[0].in_place");
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
