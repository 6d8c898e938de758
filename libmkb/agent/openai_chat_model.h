// OpenAI Chat Completions (POST <base>/chat/completions): OpenAI itself and the servers that
// speak its protocol (vLLM, SGLang, llama.cpp, LiteLLM, OpenRouter). Tool calls as
// "function" tools; usage with cached prompt tokens (prompt_tokens_details.cached_tokens, or
// DeepSeek's prompt_cache_hit_tokens) and reasoning tokens
// (completion_tokens_details.reasoning_tokens); reasoning text from "reasoning_content" or
// "reasoning" where a server returns it.
#ifndef LIBMKB_AGENT_OPENAI_CHAT_MODEL_H_
#define LIBMKB_AGENT_OPENAI_CHAT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/detail/http_chat_model.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/model_options.h"

namespace mkb {

class OpenAiChatModel : public detail::HttpChatModel {
 public:
  // `id` is an openai/ or openai-compatible/ id. FailedPreconditionError when openai/ has no
  // key (OPENAI_API_KEY unset and none given).
  static absl::StatusOr<std::unique_ptr<OpenAiChatModel>> Create(const ModelId& id,
                                                                 const ModelOptions& options);

  std::string EncodeRequest(const ChatRequest& request) const override;

 private:
  using HttpChatModel::HttpChatModel;
  std::vector<std::string> ProviderHeaders() const override;
  absl::StatusOr<ChatResponse> DecodeResponse(const std::string& body) const override;
};

// Decodes a Chat Completions response body. InvalidArgumentError when it is not one.
absl::StatusOr<ChatResponse> DecodeOpenAiResponse(const std::string& body);

}  // namespace mkb

#endif  // LIBMKB_AGENT_OPENAI_CHAT_MODEL_H_
