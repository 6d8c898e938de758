#include "libmkb/agent/anthropic_chat_model.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb {
namespace {

using nlohmann::json;

constexpr char kAnthropicDefaultBase[] = "https://api.anthropic.com";

// The API refuses empty text blocks.
std::string NonEmpty(const std::string& text) { return text.empty() ? "(empty)" : text; }

json AssistantContent(const ChatMessage& m) {
  if (!m.provider_content_json.empty()) {
    json content = detail::ParseJson(m.provider_content_json);
    if (!content.is_discarded() && content.is_array() && !content.empty()) return content;
  }
  json content = json::array();
  if (!m.text.empty() || m.tool_calls.empty()) {
    content.push_back({{"type", "text"}, {"text", NonEmpty(m.text)}});
  }
  for (const ToolCall& c : m.tool_calls) {
    json input = detail::ParseJson(c.arguments_json);
    if (input.is_discarded() || !input.is_object()) input = json::object();
    content.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input}});
  }
  return content;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AnthropicChatModel>> AnthropicChatModel::Create(
    const ModelId& id, const ModelOptions& options) {
  if (id.provider != ModelProvider::kAnthropic) {
    return absl::InvalidArgumentError(absl::StrCat("model id '", id.text, "': not anthropic/"));
  }
  if (absl::Status status = detail::CheckExtraBody(options); !status.ok()) return status;
  std::string base = options.base_url;
  if (base.empty()) base = detail::GetEnv("ANTHROPIC_BASE_URL");
  if (base.empty()) base = kAnthropicDefaultBase;
  std::string key = options.api_key;
  std::string key_source = "the api_key option";
  if (key.empty()) {
    key = detail::GetEnv("ANTHROPIC_API_KEY");
    key_source = "ANTHROPIC_API_KEY";
  }
  if (key.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        id.text, ": ANTHROPIC_API_KEY is not set (export it, or give the api_key option)"));
  }
  std::string endpoint = detail::TrimTrailingSlashes(base);
  if (!absl::EndsWith(endpoint, "/v1/messages")) {
    endpoint += absl::EndsWith(endpoint, "/v1") ? "/messages" : "/v1/messages";
  }
  return std::unique_ptr<AnthropicChatModel>(new AnthropicChatModel(
      id, options, std::move(endpoint), std::move(key), std::move(key_source)));
}

std::string AnthropicChatModel::EncodeRequest(const ChatRequest& request) const {
  json system = json::array();
  json messages = json::array();
  // Consecutive messages of one role become one message: tool results (and the user text
  // that follows them) are blocks of a single user turn, as the API requires.
  auto append = [&messages](const char* role, json blocks) {
    if (!messages.empty() && messages.back()["role"] == role) {
      for (json& b : blocks) messages.back()["content"].push_back(std::move(b));
    } else {
      messages.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  };
  for (const ChatMessage& m : request.messages) {
    switch (m.role) {
      case ChatRole::kSystem:
        system.push_back({{"type", "text"}, {"text", NonEmpty(m.text)}});
        break;
      case ChatRole::kUser:
        append("user", json::array({{{"type", "text"}, {"text", NonEmpty(m.text)}}}));
        break;
      case ChatRole::kTool:
        append("user", json::array({{{"type", "tool_result"},
                                     {"tool_use_id", m.tool_call_id},
                                     {"content", NonEmpty(m.text)}}}));
        break;
      case ChatRole::kAssistant:
        append("assistant", AssistantContent(m));
        break;
    }
  }
  if (options().prompt_caching) {
    if (!system.empty()) system.back()["cache_control"] = {{"type", "ephemeral"}};
    if (!messages.empty() && !messages.back()["content"].empty()) {
      messages.back()["content"].back()["cache_control"] = {{"type", "ephemeral"}};
    }
  }
  const int max_tokens = options().max_output_tokens > 0 ? options().max_output_tokens
                         : request.max_output_tokens > 0 ? request.max_output_tokens
                                                         : kAnthropicDefaultMaxTokens;
  json body = {
      {"model", model_id().model}, {"max_tokens", max_tokens}, {"messages", std::move(messages)}};
  if (!system.empty()) body["system"] = std::move(system);
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolDefinition& t : request.tools) {
      tools.push_back({{"name", t.name},
                       {"description", t.description},
                       {"input_schema", detail::ParseOrString(t.parameters_schema_json)}});
    }
    body["tools"] = std::move(tools);
  }
  return detail::DumpRequestBody(std::move(body), options().extra_body_json);
}

absl::StatusOr<ChatResponse> DecodeAnthropicResponse(const std::string& text) {
  json body = detail::ParseJson(text);
  if (body.is_discarded() || !body.is_object()) {
    return absl::InvalidArgumentError("not a JSON object (truncated?)");
  }
  if (detail::StringOrEmpty(body, "type") == "error") {
    return absl::InvalidArgumentError(absl::StrCat("an error in a 2xx answer: ", body.dump()));
  }
  auto content = body.find("content");
  if (content == body.end() || !content->is_array()) {
    return absl::InvalidArgumentError("content: missing");
  }
  ChatResponse response;
  response.message.role = ChatRole::kAssistant;
  int index = 0;
  for (const json& block : *content) {
    const std::string type = detail::StringOrEmpty(block, "type");
    if (type == "text") {
      if (!response.message.text.empty()) response.message.text += "\n";
      response.message.text += detail::StringOrEmpty(block, "text");
    } else if (type == "thinking") {
      response.message.reasoning += detail::StringOrEmpty(block, "thinking");
    } else if (type == "tool_use") {
      ToolCall call;
      call.id = detail::StringOrEmpty(block, "id");
      if (call.id.empty()) call.id = absl::StrCat("toolu_", index);
      call.name = detail::StringOrEmpty(block, "name");
      const json input = block.value("input", json::object());
      call.arguments_json = input.is_object() ? input.dump() : "{}";
      response.message.tool_calls.push_back(std::move(call));
    }
    ++index;
  }
  response.message.provider_content_json = content->dump();
  response.stop_reason = detail::StringOrEmpty(body, "stop_reason");
  response.model = detail::StringOrEmpty(body, "model");
  const json usage = body.value("usage", json::object());
  const int64_t uncached = detail::IntOr0(usage, "input_tokens");
  response.usage.cached_input_tokens = detail::IntOr0(usage, "cache_read_input_tokens");
  response.usage.cache_write_tokens = detail::IntOr0(usage, "cache_creation_input_tokens");
  response.usage.input_tokens =
      uncached + response.usage.cached_input_tokens + response.usage.cache_write_tokens;
  response.usage.output_tokens = detail::IntOr0(usage, "output_tokens");
  return response;
}

std::vector<std::string> AnthropicChatModel::ProviderHeaders() const {
  return {absl::StrCat("anthropic-version: ", kAnthropicVersion),
          absl::StrCat("x-api-key: ", key())};
}

absl::StatusOr<ChatResponse> AnthropicChatModel::DecodeResponse(const std::string& body) const {
  return DecodeAnthropicResponse(body);
}

}  // namespace mkb
