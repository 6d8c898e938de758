#include "libmkb/model/names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace mkb {
namespace {

// Lower-cased protobuf enum value name: ATTENTION -> "attention".
// Longest prefix ending in '_' shared by every non-zero value name of `type`.
std::string SharedPrefix(const google::protobuf::EnumDescriptor* type) {
  std::string prefix;
  bool first = true;
  for (int i = 0; i < type->value_count(); ++i) {
    const std::string& name = type->value(i)->name();
    if (type->value(i)->number() == 0) continue;
    if (first) {
      prefix = name;
      first = false;
      continue;
    }
    size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n]) ++n;
    prefix.resize(n);
  }
  const size_t underscore = prefix.rfind('_');
  return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
}

template <typename Enum>
std::string LowerEnumName(Enum value, const google::protobuf::EnumDescriptor* descriptor) {
  return EnumShortName(descriptor->FindValueByNumber(value));
}

template <typename Enum>
absl::StatusOr<Enum> ParseLowerEnumName(absl::string_view name,
                                        const google::protobuf::EnumDescriptor* descriptor,
                                        absl::string_view what) {
  if (const auto* value = FindEnumValue(descriptor, name); value != nullptr) {
    return static_cast<Enum>(value->number());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown ", what, " '", name, "'; expected one of: ", EnumShortNames(descriptor)));
}

}  // namespace

std::string EnumShortName(const google::protobuf::EnumValueDescriptor* value) {
  if (value == nullptr || value->number() == 0) return "";
  absl::string_view name = value->name();
  absl::ConsumePrefix(&name, SharedPrefix(value->type()));
  return absl::AsciiStrToLower(name);
}

const google::protobuf::EnumValueDescriptor* FindEnumValue(
    const google::protobuf::EnumDescriptor* type, absl::string_view name) {
  const std::string upper = absl::AsciiStrToUpper(name);
  const google::protobuf::EnumValueDescriptor* value = type->FindValueByName(upper);
  if (value == nullptr) value = type->FindValueByName(SharedPrefix(type) + upper);
  if (value == nullptr || value->number() == 0) return nullptr;
  return value;
}

std::string EnumShortNames(const google::protobuf::EnumDescriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() != 0) names.push_back(EnumShortName(type->value(i)));
  }
  return absl::StrJoin(names, ", ");
}

std::string FamilyName(v1::Family family) { return LowerEnumName(family, v1::Family_descriptor()); }

absl::StatusOr<v1::Family> ParseFamily(absl::string_view name) {
  return ParseLowerEnumName<v1::Family>(name, v1::Family_descriptor(), "family");
}

std::vector<v1::Family> AllFamilies() {
  return {v1::ATTENTION, v1::KV_CACHE,     v1::MLP_NORM,
          v1::MOE,       v1::QUANTIZATION, v1::LINEAR_ATTENTION};
}

std::string DslName(v1::Dsl dsl) { return LowerEnumName(dsl, v1::Dsl_descriptor()); }

absl::StatusOr<v1::Dsl> ParseDsl(absl::string_view name) {
  return ParseLowerEnumName<v1::Dsl>(name, v1::Dsl_descriptor(), "DSL");
}

v1::Dsl OtherDsl(v1::Dsl dsl) {
  switch (dsl) {
    case v1::CUTEDSL:
      return v1::TIRX;
    case v1::TIRX:
      return v1::CUTEDSL;
    default:
      return v1::DSL_UNSPECIFIED;
  }
}

std::string DTypeName(v1::DType dtype) { return LowerEnumName(dtype, v1::DType_descriptor()); }

absl::StatusOr<v1::DType> ParseDType(absl::string_view name) {
  absl::string_view stripped = name;
  if (absl::StartsWith(stripped, "torch.")) stripped.remove_prefix(6);
  return ParseLowerEnumName<v1::DType>(stripped, v1::DType_descriptor(), "dtype");
}

bool IsFloatingPoint(v1::DType dtype) { return Epsilon(dtype) > 0; }

double Epsilon(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT64:
      return 2.220446049250313e-16;  // 2^-52
    case v1::FLOAT32:
      return 1.1920928955078125e-07;  // 2^-23
    case v1::FLOAT16:
      return 0.0009765625;  // 2^-10
    case v1::BFLOAT16:
      return 0.0078125;  // 2^-7
    case v1::FLOAT8_E4M3FN:
      return 0.125;  // 2^-3
    case v1::FLOAT8_E5M2:
      return 0.25;  // 2^-2
    default:
      return 0.0;
  }
}

int ElementBytes(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT64:
    case v1::INT64:
      return 8;
    case v1::FLOAT32:
    case v1::INT32:
      return 4;
    case v1::FLOAT16:
    case v1::BFLOAT16:
    case v1::INT16:
      return 2;
    case v1::FLOAT8_E4M3FN:
    case v1::FLOAT8_E5M2:
    case v1::INT8:
    case v1::UINT8:
    case v1::BOOL:
      return 1;
    default:
      return 0;
  }
}

std::string DeviceKindName(v1::DeviceKind device) {
  if (device == v1::DEVICE_KIND_UNSPECIFIED) return "auto";
  return LowerEnumName(device, v1::DeviceKind_descriptor());
}

absl::StatusOr<v1::DeviceKind> ParseDeviceKind(absl::string_view name) {
  if (absl::AsciiStrToLower(name) == "auto") return v1::DEVICE_KIND_UNSPECIFIED;
  return ParseLowerEnumName<v1::DeviceKind>(name, v1::DeviceKind_descriptor(), "device");
}

std::string VerdictStatusName(v1::VerdictStatus status) {
  return LowerEnumName(status, v1::VerdictStatus_descriptor());
}

std::string AttemptStateName(v1::AttemptState state) {
  return LowerEnumName(state, v1::AttemptState_descriptor());
}

}  // namespace mkb
