// A provider-neutral JSON form of the conversation types (libmkb/agent/chat.h): what a Python
// model receives and returns, and what the trajectory records.
//
//   message:  {"role": "assistant", "content": "...", "reasoning": "...",
//              "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}]}
//             {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "..."}
//   request:  {"messages": [...], "tools": [{"name", "description", "parameters"}],
//              "max_output_tokens": 0}
//   response: {"content": "...", "tool_calls": [...], "reasoning": "...", "stop_reason": "...",
//              "model": "...", "usage": {"input_tokens", "cached_input_tokens",
//              "cache_write_tokens", "output_tokens", "reasoning_tokens"}}
//
// Parsing accepts a tool call's "arguments" as an object or as JSON text, and a bare string as
// a response (text only). Errors are InvalidArgumentError naming the field path.
#ifndef LIBMKB_AGENT_CHAT_JSON_H_
#define LIBMKB_AGENT_CHAT_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libmkb/agent/chat.h"

namespace mkb {

std::string ChatMessageToJson(const ChatMessage& message);
std::string ChatRequestToJson(const ChatRequest& request);
std::string ChatResponseToJson(const ChatResponse& response);
std::string TokenUsageToJson(const TokenUsage& usage);

absl::StatusOr<ChatRequest> ChatRequestFromJson(absl::string_view json);
absl::StatusOr<ChatResponse> ChatResponseFromJson(absl::string_view json);

}  // namespace mkb

#endif  // LIBMKB_AGENT_CHAT_JSON_H_
