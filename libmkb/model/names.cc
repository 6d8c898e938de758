#include "libmkb/model/names.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

std::string PythonScalarTypeName(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT64:
      return "float";
    case v1::INT64:
      return "int";
    case v1::BOOL:
      return "bool";
    default:
      return "";
  }
}

std::string PythonScalarLiteral(v1::DType dtype, double value) {
  if (dtype == v1::BOOL) return value != 0 ? "True" : "False";
  if (dtype == v1::INT64) return absl::StrCat(static_cast<int64_t>(value));
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  // Python's repr: the shortest digits that read back as the same double, laid out fixed for
  // decimal exponents -4..15 and scientific (1e-05, 1e+16) outside them.
  char text[32];
  const std::to_chars_result written =
      std::to_chars(text, text + sizeof(text), std::fabs(value), std::chars_format::scientific);
  const std::string scientific(text, written.ptr);  // "8.838834764831843e-02"
  const size_t e = scientific.find('e');
  std::string digits = scientific.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string out = std::signbit(value) ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    absl::StrAppend(&out, digits.substr(0, 1), digits.size() > 1 ? "." : "", digits.substr(1),
                    exponent < 0 ? "e-" : "e+", absl::StrFormat("%02d", std::abs(exponent)));
  } else if (exponent < 0) {
    absl::StrAppend(&out, "0.", std::string(-exponent - 1, '0'), digits);
  } else if (static_cast<int>(digits.size()) <= exponent + 1) {
    absl::StrAppend(&out, digits, std::string(exponent + 1 - digits.size(), '0'), ".0");
  } else {
    absl::StrAppend(&out, digits.substr(0, exponent + 1), ".", digits.substr(exponent + 1));
  }
  return out;
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
