#include "libmkb/agent/chat.h"

#include "absl/strings/str_cat.h"

namespace mkb {

absl::string_view ChatRoleName(ChatRole role) {
  switch (role) {
    case ChatRole::kSystem:
      return "system";
    case ChatRole::kUser:
      return "user";
    case ChatRole::kAssistant:
      return "assistant";
    case ChatRole::kTool:
      return "tool";
  }
  return "user";
}

absl::StatusOr<ChatRole> ParseChatRole(absl::string_view name) {
  for (ChatRole role :
       {ChatRole::kSystem, ChatRole::kUser, ChatRole::kAssistant, ChatRole::kTool}) {
    if (name == ChatRoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("role: '", name, "' is not one of system, user, assistant, tool"));
}

ChatMessage TextMessage(ChatRole role, std::string text) {
  ChatMessage message;
  message.role = role;
  message.text = std::move(text);
  return message;
}

TokenUsage& TokenUsage::operator+=(const TokenUsage& other) {
  input_tokens += other.input_tokens;
  cached_input_tokens += other.cached_input_tokens;
  cache_write_tokens += other.cache_write_tokens;
  output_tokens += other.output_tokens;
  reasoning_tokens += other.reasoning_tokens;
  return *this;
}

}  // namespace mkb
