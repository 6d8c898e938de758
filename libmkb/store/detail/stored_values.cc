#include "libmkb/store/detail/stored_values.h"

#include <cmath>

#include "libmkb/model/names.h"

namespace mkb::store_detail {

std::string StateText(v1::AttemptState state) { return AttemptStateName(state); }

absl::StatusOr<v1::AttemptState> ParseState(const std::string& text, const std::string& where) {
  const auto* value = FindEnumValue(v1::AttemptState_descriptor(), text);
  if (value == nullptr) {
    return absl::DataLossError(absl::StrCat(where, ": unknown trial state '", text, "'"));
  }
  return static_cast<v1::AttemptState>(value->number());
}

std::optional<double> Finite(bool present, double value) {
  if (!present || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace mkb::store_detail
