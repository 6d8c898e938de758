// Canonical lower-case names of the data model's enums, as used in folder names, the CLI,
// exported tables and the problem format ("mlp_norm", "cutedsl", "bfloat16").
#ifndef LIBMKB_MODEL_NAMES_H_
#define LIBMKB_MODEL_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mkb/v1/attempt.pb.h"
#include "mkb/v1/common.pb.h"
#include "mkb/v1/verdict.pb.h"

namespace mkb {

// The short, lower-case name of an enum value: its name without the prefix that all non-zero
// values of its enum share ("ATTEMPT_FINISHED" -> "finished", "MLP_NORM" -> "mlp_norm").
// Empty for the zero (unspecified) value.
std::string EnumShortName(const google::protobuf::EnumValueDescriptor* value);
// The value named `name`: a short name or the full name, in any case. nullptr if none, or if
// it is the zero value.
const google::protobuf::EnumValueDescriptor* FindEnumValue(
    const google::protobuf::EnumDescriptor* type, absl::string_view name);
// "a, b, c": the short names of an enum's non-zero values, for error messages.
std::string EnumShortNames(const google::protobuf::EnumDescriptor* type);

std::string FamilyName(v1::Family family);  // "mlp_norm"; "" for UNSPECIFIED
absl::StatusOr<v1::Family> ParseFamily(absl::string_view name);
std::vector<v1::Family> AllFamilies();

std::string DslName(v1::Dsl dsl);  // "cutedsl", "tirx"
absl::StatusOr<v1::Dsl> ParseDsl(absl::string_view name);
// The other DSL of the pair: CUTEDSL <-> TIRX.
v1::Dsl OtherDsl(v1::Dsl dsl);

std::string DTypeName(v1::DType dtype);  // torch's name: "bfloat16", "float8_e4m3fn"
absl::StatusOr<v1::DType> ParseDType(absl::string_view name);
bool IsFloatingPoint(v1::DType dtype);
// Machine epsilon of a floating-point dtype (2^-7 for bfloat16, 2^-10 for float16, ...); 0
// otherwise.
double Epsilon(v1::DType dtype);
int ElementBytes(v1::DType dtype);
// The Python type a scalar input of this dtype is passed as (TensorSpec.scalar): "float" for
// FLOAT64, "int" for INT64, "bool" for BOOL; "" for every other dtype, which no scalar has.
std::string PythonScalarTypeName(v1::DType dtype);
// A scalar's value as Python writes a literal of that type: "0.08838834764831843" (the shortest
// text that reads back as the same double), "32", "True".
std::string PythonScalarLiteral(v1::DType dtype, double value);

std::string DeviceKindName(v1::DeviceKind device);  // "auto", "cpu", "cuda"
absl::StatusOr<v1::DeviceKind> ParseDeviceKind(absl::string_view name);

std::string VerdictStatusName(v1::VerdictStatus status);  // "passed", "mismatch", ...
std::string AttemptStateName(v1::AttemptState state);     // "finished", "skipped", ...

}  // namespace mkb

#endif  // LIBMKB_MODEL_NAMES_H_
