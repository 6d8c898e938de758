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

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/http_client.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/model_options.h"

namespace mkb {

class OpenAiChatModel : public ChatModel {
 public:
  // `id` is an openai/ or openai-compatible/ id. FailedPreconditionError when openai/ has no
  // key (OPENAI_API_KEY unset and none given).
  static absl::StatusOr<std::unique_ptr<OpenAiChatModel>> Create(const ModelId& id,
                                                                 const ModelOptions& options);

  absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) override;
  const std::string& id() const override { return id_.text; }
  bool native_tools() const override { return options_.native_tools; }

  const std::string& endpoint() const { return endpoint_; }
  // The request body Chat() would send (JSON), for tests and debugging.
  std::string EncodeRequest(const ChatRequest& request) const;

 private:
  OpenAiChatModel(ModelId id, ModelOptions options, std::string endpoint, std::string key,
                  std::string key_source);

  ModelId id_;
  ModelOptions options_;
  std::string endpoint_;
  std::string key_;
  std::string key_source_;
  HttpClient http_;
};

// Decodes a Chat Completions response body. InvalidArgumentError when it is not one.
absl::StatusOr<ChatResponse> DecodeOpenAiResponse(const std::string& body);

}  // namespace mkb

#endif  // LIBMKB_AGENT_OPENAI_CHAT_MODEL_H_
