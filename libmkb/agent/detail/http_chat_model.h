// What every HTTP chat client holds and does alike (anthropic_chat_model.h,
// openai_chat_model.h): the model id and options, the endpoint, the API key with where it came
// from (for 401 / 403 messages), one HttpClient, and Chat(): POST the encoded request with the
// JSON headers, the provider's own headers and the options' extra headers, under the options'
// timeouts and retry policy (detail/api_call.h). A provider adds only what differs: how it finds
// its endpoint and key, its request and response formats and its own headers.
#ifndef LIBMKB_AGENT_DETAIL_HTTP_CHAT_MODEL_H_
#define LIBMKB_AGENT_DETAIL_HTTP_CHAT_MODEL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/http_client.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/model_options.h"

namespace mkb::detail {

class HttpChatModel : public ChatModel {
 public:
  absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) final;
  const std::string& id() const final { return id_.text; }
  bool native_tools() const final { return options_.native_tools; }

  const std::string& endpoint() const { return endpoint_; }
  // The request body Chat() would send (JSON), for tests and debugging.
  virtual std::string EncodeRequest(const ChatRequest& request) const = 0;

 protected:
  HttpChatModel(ModelId id, ModelOptions options, std::string endpoint, std::string key,
                std::string key_source);

  const ModelId& model_id() const { return id_; }
  const ModelOptions& options() const { return options_; }
  const std::string& key() const { return key_; }

 private:
  // The provider's headers, sent after Content-Type and Accept and before the options' extra
  // headers (its key, its API version).
  virtual std::vector<std::string> ProviderHeaders() const = 0;
  // Decodes a 2xx body; an error means it was cut short or malformed (retried).
  virtual absl::StatusOr<ChatResponse> DecodeResponse(const std::string& body) const = 0;

  ModelId id_;
  ModelOptions options_;
  std::string endpoint_;
  std::string key_;
  std::string key_source_;
  HttpClient http_;
};

// OK when options.extra_body_json is empty or a JSON object; InvalidArgumentError naming
// extra_body_json otherwise. Create() checks it, so EncodeRequest() can merge it unchecked.
absl::Status CheckExtraBody(const ModelOptions& options);

// `base` (a base URL) without its trailing slashes.
std::string TrimTrailingSlashes(absl::string_view base);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_HTTP_CHAT_MODEL_H_
