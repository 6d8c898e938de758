// The conversation between an attempt and a model: messages, tool calls, token usage, and the
// ChatModel interface that every model (an API client, the scripted demo model, a Python
// object) implements. Provider-neutral: each client translates to its API's wire format.
#ifndef LIBMKB_AGENT_CHAT_H_
#define LIBMKB_AGENT_CHAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mkb {

enum class ChatRole { kSystem, kUser, kAssistant, kTool };

// "system", "user", "assistant", "tool".
absl::string_view ChatRoleName(ChatRole role);
absl::StatusOr<ChatRole> ParseChatRole(absl::string_view name);

struct ToolCall {
  std::string id;              // the provider's id ("call_...", "toolu_..."); made up when absent
  std::string name;            // "bash", "submit", "finish"
  std::string arguments_json;  // a JSON object, as text ("{}" when there are none)
};

struct ChatMessage {
  ChatRole role = ChatRole::kUser;
  std::string text;
  std::vector<ToolCall> tool_calls;  // kAssistant: the calls it makes
  std::string tool_call_id;          // kTool: the call this result answers
  std::string tool_name;             // kTool: that call's tool
  std::string reasoning;             // kAssistant: reasoning text where the API returns it
  // kAssistant: the provider's own content for this turn (Anthropic content blocks, thinking
  // signatures included), sent back verbatim to the same provider; empty otherwise.
  std::string provider_content_json;
};

// A message of text alone.
ChatMessage TextMessage(ChatRole role, std::string text);

struct ToolDefinition {
  std::string name;
  std::string description;
  std::string parameters_schema_json;  // a JSON Schema object
};

struct ChatRequest {
  std::vector<ChatMessage> messages;  // may start with one kSystem message
  std::vector<ToolDefinition> tools;  // empty: a text-only conversation
  int max_output_tokens = 0;          // 0: the client's default
};

// Token counts of one request (or their sum over many). The attempt's v1::Usage is their sum.
struct TokenUsage {
  int64_t input_tokens = 0;         // every prompt token, cached ones included
  int64_t cached_input_tokens = 0;  // read from a prompt cache
  int64_t cache_write_tokens = 0;   // written to a prompt cache
  int64_t output_tokens = 0;        // reasoning included
  int64_t reasoning_tokens = 0;     // part of output_tokens, where the API says

  TokenUsage& operator+=(const TokenUsage& other);
};

struct ChatResponse {
  ChatMessage message;  // role kAssistant
  TokenUsage usage;
  std::string stop_reason;  // the provider's ("stop", "tool_calls", "end_turn", "max_tokens", ...)
  std::string model;        // the model that answered, as the API names it
  double seconds = 0;       // wall-clock of Chat(), retries and their waits included
  int http_attempts = 0;    // 1 + retries; 0 for models that make no HTTP request
};

// A model an attempt talks to. Errors, by code:
//  - Unavailable: transient (network, timeouts, 408/409/429/5xx, a truncated body), after the
//    client's own retries. The trial may be retried later.
//  - Unauthenticated / PermissionDenied: 401 / 403; the message names the key's variable.
//  - ResourceExhausted: a spend cap, quota or credit limit (retrying will not help).
//  - OutOfRange: the conversation no longer fits the model's context window.
//  - InvalidArgument: the API rejected the request (400), with its message; NotFound: 404.
// An object serves one conversation at a time; it is not shared between threads.
class ChatModel {
 public:
  virtual ~ChatModel() = default;
  virtual absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) = 0;
  // The model id it was made from ("openai/gpt-5", "scripted/demo").
  virtual const std::string& id() const = 0;
  // False: the model gets no tool definitions and acts through the text protocol
  // (libmkb/agent/text_protocol.h).
  virtual bool native_tools() const { return true; }
  // False for stand-ins that are not language models (the scripted demo model).
  virtual bool is_llm() const { return true; }
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_CHAT_H_
