#include "libmkb/model/names.h"

#include <catch2/catch_test_macros.hpp>

TEST_CASE("family names round-trip and match the suite's folder names") {
  CHECK(mkb::FamilyName(mkb::v1::MLP_NORM) == "mlp_norm");
  CHECK(mkb::FamilyName(mkb::v1::LINEAR_ATTENTION) == "linear_attention");
  for (mkb::v1::Family family : mkb::AllFamilies()) {
    auto parsed = mkb::ParseFamily(mkb::FamilyName(family));
    REQUIRE(parsed.ok());
    CHECK(*parsed == family);
  }
  CHECK(mkb::AllFamilies().size() == 6);
}

TEST_CASE("unknown names give an error listing the valid ones") {
  auto parsed = mkb::ParseFamily("mlpnorm");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(parsed.status().message().find("mlp_norm") != absl::string_view::npos);
  CHECK_FALSE(mkb::ParseDsl("cuda").ok());
}

TEST_CASE("short enum names drop the shared prefix") {
  CHECK(mkb::AttemptStateName(mkb::v1::ATTEMPT_FINISHED) == "finished");
  CHECK(mkb::VerdictStatusName(mkb::v1::POLICY_VIOLATION) == "policy_violation");
  CHECK(mkb::EnumShortName(mkb::v1::MismatchKind_descriptor()->FindValueByName("MISMATCH_NAN")) ==
        "nan");
  CHECK(mkb::FindEnumValue(mkb::v1::AttemptState_descriptor(), "skipped")->number() ==
        mkb::v1::ATTEMPT_SKIPPED);
  CHECK(mkb::FindEnumValue(mkb::v1::AttemptState_descriptor(), "ATTEMPT_SKIPPED")->number() ==
        mkb::v1::ATTEMPT_SKIPPED);
  CHECK(mkb::FindEnumValue(mkb::v1::AttemptState_descriptor(), "attempt_state_unspecified") ==
        nullptr);
}

TEST_CASE("dtype facts") {
  CHECK(mkb::DTypeName(mkb::v1::FLOAT8_E4M3FN) == "float8_e4m3fn");
  CHECK(*mkb::ParseDType("torch.bfloat16") == mkb::v1::BFLOAT16);
  CHECK(mkb::Epsilon(mkb::v1::BFLOAT16) == 0.0078125);
  CHECK(mkb::Epsilon(mkb::v1::FLOAT32) == 1.1920928955078125e-07);
  CHECK(mkb::Epsilon(mkb::v1::INT32) == 0.0);
  CHECK_FALSE(mkb::IsFloatingPoint(mkb::v1::UINT8));
  CHECK(mkb::ElementBytes(mkb::v1::BFLOAT16) == 2);
  CHECK(mkb::OtherDsl(mkb::v1::CUTEDSL) == mkb::v1::TIRX);
  CHECK(mkb::OtherDsl(mkb::v1::TIRX) == mkb::v1::CUTEDSL);
}
