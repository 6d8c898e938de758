// Anthropic Messages (POST <base>/v1/messages): tool_use / tool_result blocks, prompt-cache
// breakpoints, and usage with cache reads and writes. Usage is normalised to the attempt's
// convention: input_tokens counts every prompt token (Anthropic's input_tokens plus
// cache_read_input_tokens plus cache_creation_input_tokens).
#ifndef LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_
#define LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/http_client.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/model_options.h"

namespace mkb {

inline constexpr char kAnthropicVersion[] = "2023-06-01";
inline constexpr int kAnthropicDefaultMaxTokens = 16000;

class AnthropicChatModel : public ChatModel {
 public:
  // FailedPreconditionError when there is no key (ANTHROPIC_API_KEY unset and none given).
  static absl::StatusOr<std::unique_ptr<AnthropicChatModel>> Create(const ModelId& id,
                                                                    const ModelOptions& options);

  absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) override;
  const std::string& id() const override { return id_.text; }
  bool native_tools() const override { return options_.native_tools; }

  const std::string& endpoint() const { return endpoint_; }
  // The request body Chat() would send (JSON), for tests and debugging.
  std::string EncodeRequest(const ChatRequest& request) const;

 private:
  AnthropicChatModel(ModelId id, ModelOptions options, std::string endpoint, std::string key,
                     std::string key_source);

  ModelId id_;
  ModelOptions options_;
  std::string endpoint_;
  std::string key_;
  std::string key_source_;
  HttpClient http_;
};

// Decodes a Messages response body. InvalidArgumentError when it is not one.
absl::StatusOr<ChatResponse> DecodeAnthropicResponse(const std::string& body);

}  // namespace mkb

#endif  // LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_
