#include "libmkb/agent/detail/http_chat_model.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/strip.h"
#include "libmkb/agent/detail/api_call.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb::detail {

HttpChatModel::HttpChatModel(ModelId id, ModelOptions options, std::string endpoint,
                             std::string key, std::string key_source)
    : id_(std::move(id)),
      options_(std::move(options)),
      endpoint_(std::move(endpoint)),
      key_(std::move(key)),
      key_source_(std::move(key_source)) {}

absl::StatusOr<ChatResponse> HttpChatModel::Chat(const ChatRequest& request) {
  HttpRequest http;
  http.url = endpoint_;
  http.body = EncodeRequest(request);
  http.timeout = options_.request_timeout;
  http.connect_timeout = options_.connect_timeout;
  http.headers = {"Content-Type: application/json", "Accept: application/json"};
  for (std::string& h : ProviderHeaders()) http.headers.push_back(std::move(h));
  for (const std::string& h : options_.extra_headers) http.headers.push_back(h);
  ApiCallContext context{id_.text, key_source_, options_.retry};
  return CallWithRetries(http_, http, context,
                         [this](const std::string& body) { return DecodeResponse(body); });
}

absl::Status CheckExtraBody(const ModelOptions& options) {
  nlohmann::json probe = nlohmann::json::object();
  return MergeObject(&probe, options.extra_body_json, "extra_body_json");
}

std::string TrimTrailingSlashes(absl::string_view base) {
  while (absl::ConsumeSuffix(&base, "/")) {
  }
  return std::string(base);
}

}  // namespace mkb::detail
