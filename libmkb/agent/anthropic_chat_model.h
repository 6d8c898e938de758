// Anthropic Messages (POST <base>/v1/messages): tool_use / tool_result blocks, prompt-cache
// breakpoints, and usage with cache reads and writes. Usage is normalised to the attempt's
// convention: input_tokens counts every prompt token (Anthropic's input_tokens plus
// cache_read_input_tokens plus cache_creation_input_tokens).
#ifndef LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_
#define LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/detail/http_chat_model.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/model_options.h"

namespace mkb {

inline constexpr char kAnthropicVersion[] = "2023-06-01";
inline constexpr int kAnthropicDefaultMaxTokens = 16000;

class AnthropicChatModel : public detail::HttpChatModel {
 public:
  // FailedPreconditionError when there is no key (ANTHROPIC_API_KEY unset and none given).
  static absl::StatusOr<std::unique_ptr<AnthropicChatModel>> Create(const ModelId& id,
                                                                    const ModelOptions& options);

  std::string EncodeRequest(const ChatRequest& request) const override;

 private:
  using HttpChatModel::HttpChatModel;
  std::vector<std::string> ProviderHeaders() const override;
  absl::StatusOr<ChatResponse> DecodeResponse(const std::string& body) const override;
};

// Decodes a Messages response body. InvalidArgumentError when it is not one.
absl::StatusOr<ChatResponse> DecodeAnthropicResponse(const std::string& body);

}  // namespace mkb

#endif  // LIBMKB_AGENT_ANTHROPIC_CHAT_MODEL_H_
