#include "libmkb/agent/detail/json_util.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace mkb::detail {

nlohmann::json ParseOrString(absl::string_view text) {
  nlohmann::json value = ParseJson(text);
  if (value.is_discarded()) return std::string(text);
  return value;
}

nlohmann::json ParseJson(absl::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

int64_t IntOr0(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end()) return 0;
  if (it->is_number_integer() || it->is_number_unsigned()) return it->get<int64_t>();
  if (it->is_number_float()) {
    const double v = it->get<double>();
    if (std::isfinite(v)) return static_cast<int64_t>(v);
  }
  return 0;
}

std::string StringOrEmpty(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

absl::Status MergeObject(nlohmann::json* body, absl::string_view extra, absl::string_view what) {
  if (extra.empty()) return absl::OkStatus();
  nlohmann::json value = ParseJson(extra);
  if (value.is_discarded() || !value.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": must be a JSON object"));
  }
  for (auto it = value.begin(); it != value.end(); ++it) (*body)[it.key()] = it.value();
  return absl::OkStatus();
}

std::string DumpRequestBody(nlohmann::json body, absl::string_view extra) {
  (void)MergeObject(&body, extra, "extra_body_json");
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string GetEnv(const char* name) {
  // getenv, not `environ`: libmkb may be loaded with RTLD_DEEPBIND, where only libc's own
  // functions see the process's current environment.
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace mkb::detail
