// Values as the store's columns hold them: a trial state as its name, a protobuf message as its
// serialized bytes, a double that may be absent or non-finite as NULL.
#ifndef LIBMKB_STORE_DETAIL_STORED_VALUES_H_
#define LIBMKB_STORE_DETAIL_STORED_VALUES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mkb/v1/attempt.pb.h"

namespace mkb::store_detail {

// The state column's text of `state` ("pending", "running", ...).
std::string StateText(v1::AttemptState state);

// The state a state column holds; DataLossError naming `where` for an unknown name.
absl::StatusOr<v1::AttemptState> ParseState(const std::string& text, const std::string& where);

// The message a BLOB column holds; DataLossError naming `where` and the type when it does not
// parse.
template <typename T>
absl::StatusOr<T> ParseMessage(const std::string& bytes, const std::string& where) {
  T message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError(
        absl::StrCat(where, ": stored ", T::descriptor()->name(), " does not parse"));
  }
  return message;
}

// `value` when `present` and finite; else nullopt (stored as NULL).
std::optional<double> Finite(bool present, double value);

}  // namespace mkb::store_detail

#endif  // LIBMKB_STORE_DETAIL_STORED_VALUES_H_
