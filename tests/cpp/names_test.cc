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

TEST_CASE("scalar inputs are Python floats, ints and bools, written as Python writes them") {
  CHECK(mkb::PythonScalarTypeName(mkb::v1::FLOAT64) == "float");
  CHECK(mkb::PythonScalarTypeName(mkb::v1::INT64) == "int");
  CHECK(mkb::PythonScalarTypeName(mkb::v1::BOOL) == "bool");
  CHECK(mkb::PythonScalarTypeName(mkb::v1::FLOAT32).empty());
  using mkb::PythonScalarLiteral;
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 0.08838834764831843) == "0.08838834764831843");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 1e-05) == "1e-05");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 0.0001) == "0.0001");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 2.5) == "2.5");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 100000.0) == "100000.0");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 1e16) == "1e+16");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, -1.5e-7) == "-1.5e-07");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 0.0) == "0.0");
  CHECK(PythonScalarLiteral(mkb::v1::FLOAT64, 10000.5) == "10000.5");
  CHECK(PythonScalarLiteral(mkb::v1::INT64, 32) == "32");
  CHECK(PythonScalarLiteral(mkb::v1::BOOL, 1) == "True");
}
