// nlohmann::json helpers shared by the agent's sources. Internal: nlohmann-json is a private
// dependency of libmkb, so no public header includes this one.
#ifndef LIBMKB_AGENT_DETAIL_JSON_UTIL_H_
#define LIBMKB_AGENT_DETAIL_JSON_UTIL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mkb::detail {

// `text` parsed as JSON, or the string itself when it does not parse.
nlohmann::json ParseOrString(absl::string_view text);

// `text` parsed as JSON; a discarded value (is_discarded()) when it does not parse.
nlohmann::json ParseJson(absl::string_view text);

// object[key] when it is an integer (or a float with an integral value), else 0. Tolerant on
// purpose: usage fields come from many servers, and a missing count must not fail a turn.
int64_t IntOr0(const nlohmann::json& object, const char* key);

// object[key] when it is a string, else "".
std::string StringOrEmpty(const nlohmann::json& object, const char* key);

// Merges the JSON object `extra` into `body` (its keys win). InvalidArgumentError naming
// `what` when `extra` is not a JSON object. Empty `extra`: nothing to merge.
absl::Status MergeObject(nlohmann::json* body, absl::string_view extra, absl::string_view what);

// A request body as sent: `body` with the JSON object `extra` merged in (MergeObject; the
// caller checked `extra` before, a bad one is left out), dumped compactly with invalid UTF-8
// replaced.
std::string DumpRequestBody(nlohmann::json body, absl::string_view extra);

// The value of environment variable `name`, "" when unset.
std::string GetEnv(const char* name);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_JSON_UTIL_H_
