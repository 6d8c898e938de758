#include "libmkb/agent/openai_chat_model.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb {
namespace {

using nlohmann::json;

constexpr char kOpenAiDefaultBase[] = "https://api.openai.com/v1";

// Text of a message "content": a string, null, or a list of parts ({"type": "text", ...}).
std::string ContentText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const json& part : content) {
      if (part.is_string()) text += part.get<std::string>();
      if (part.is_object()) text += detail::StringOrEmpty(part, "text");
    }
  }
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OpenAiChatModel>> OpenAiChatModel::Create(
    const ModelId& id, const ModelOptions& options) {
  if (id.provider != ModelProvider::kOpenAi && id.provider != ModelProvider::kOpenAiCompatible) {
    return absl::InvalidArgumentError(
        absl::StrCat("model id '", id.text, "': not an openai/ or openai-compatible/ id"));
  }
  if (absl::Status status = detail::CheckExtraBody(options); !status.ok()) return status;
  std::string base = options.base_url;
  std::string key = options.api_key;
  std::string key_source = key.empty() ? "" : "the api_key option";
  if (id.provider == ModelProvider::kOpenAi) {
    if (base.empty()) base = detail::GetEnv("OPENAI_BASE_URL");
    if (base.empty()) base = kOpenAiDefaultBase;
    if (key.empty()) {
      key = detail::GetEnv("OPENAI_API_KEY");
      key_source = "OPENAI_API_KEY";
    }
    if (key.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          id.text, ": OPENAI_API_KEY is not set (export it, or give the api_key option)"));
    }
  } else {
    if (base.empty()) base = id.base_url;
    if (key.empty()) {
      const bool openrouter = absl::StrContains(base, "openrouter.ai");
      key_source = openrouter ? "OPENROUTER_API_KEY" : "OPENAI_COMPATIBLE_API_KEY";
      key = detail::GetEnv(key_source.c_str());
      if (key.empty()) key_source = "no key (none set)";
    }
  }
  std::string endpoint = detail::TrimTrailingSlashes(base);
  if (!absl::EndsWith(endpoint, "/chat/completions")) endpoint += "/chat/completions";
  return std::unique_ptr<OpenAiChatModel>(
      new OpenAiChatModel(id, options, std::move(endpoint), std::move(key), std::move(key_source)));
}

std::string OpenAiChatModel::EncodeRequest(const ChatRequest& request) const {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) {
    switch (m.role) {
      case ChatRole::kSystem:
      case ChatRole::kUser:
        messages.push_back({{"role", std::string(ChatRoleName(m.role))}, {"content", m.text}});
        break;
      case ChatRole::kAssistant: {
        json out = {{"role", "assistant"}};
        out["content"] = m.text.empty() && !m.tool_calls.empty() ? json(nullptr) : json(m.text);
        if (!m.tool_calls.empty()) {
          json calls = json::array();
          for (const ToolCall& c : m.tool_calls) {
            calls.push_back({{"id", c.id},
                             {"type", "function"},
                             {"function", {{"name", c.name}, {"arguments", c.arguments_json}}}});
          }
          out["tool_calls"] = std::move(calls);
        }
        messages.push_back(std::move(out));
        break;
      }
      case ChatRole::kTool:
        messages.push_back(
            {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.text}});
        break;
    }
  }
  json body = {{"model", model_id().model}, {"messages", std::move(messages)}, {"stream", false}};
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolDefinition& t : request.tools) {
      tools.push_back({{"type", "function"},
                       {"function",
                        {{"name", t.name},
                         {"description", t.description},
                         {"parameters", detail::ParseOrString(t.parameters_schema_json)}}}});
    }
    body["tools"] = std::move(tools);
  }
  const int max_tokens =
      options().max_output_tokens > 0 ? options().max_output_tokens : request.max_output_tokens;
  if (max_tokens > 0) {
    // OpenAI's current name; compatible servers mostly know only the older one.
    body[model_id().provider == ModelProvider::kOpenAi ? "max_completion_tokens" : "max_tokens"] =
        max_tokens;
  }
  return detail::DumpRequestBody(std::move(body), options().extra_body_json);
}

absl::StatusOr<ChatResponse> DecodeOpenAiResponse(const std::string& text) {
  json body = detail::ParseJson(text);
  if (body.is_discarded() || !body.is_object()) {
    return absl::InvalidArgumentError("not a JSON object (truncated?)");
  }
  if (body.contains("error") && !body.contains("choices")) {
    return absl::InvalidArgumentError(
        absl::StrCat("an error in a 2xx answer: ", body["error"].dump()));
  }
  auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object() || !(*choices)[0].contains("message") ||
      !(*choices)[0]["message"].is_object()) {
    return absl::InvalidArgumentError("choices[0].message: missing");
  }
  const json& choice = (*choices)[0];
  const json& message = choice["message"];
  ChatResponse response;
  response.message.role = ChatRole::kAssistant;
  response.message.text = ContentText(message.value("content", json()));
  response.message.reasoning = detail::StringOrEmpty(message, "reasoning_content");
  if (response.message.reasoning.empty()) {
    response.message.reasoning = detail::StringOrEmpty(message, "reasoning");
  }
  if (message.contains("tool_calls") && message["tool_calls"].is_array()) {
    int index = 0;
    for (const json& c : message["tool_calls"]) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) {
        return absl::InvalidArgumentError(
            absl::StrCat("choices[0].message.tool_calls[", index, "]: no function"));
      }
      ToolCall call;
      call.id = detail::StringOrEmpty(c, "id");
      if (call.id.empty()) call.id = absl::StrCat("call_", index);
      call.name = detail::StringOrEmpty(c["function"], "name");
      const json& arguments = c["function"].value("arguments", json());
      call.arguments_json = arguments.is_string() ? arguments.get<std::string>()
                            : arguments.is_null() ? "{}"
                                                  : arguments.dump();
      if (call.arguments_json.empty()) call.arguments_json = "{}";
      response.message.tool_calls.push_back(std::move(call));
      ++index;
    }
  }
  response.stop_reason = detail::StringOrEmpty(choice, "finish_reason");
  response.model = detail::StringOrEmpty(body, "model");
  const json usage = body.value("usage", json::object());
  response.usage.input_tokens = detail::IntOr0(usage, "prompt_tokens");
  response.usage.output_tokens = detail::IntOr0(usage, "completion_tokens");
  response.usage.cached_input_tokens =
      detail::IntOr0(usage.value("prompt_tokens_details", json::object()), "cached_tokens");
  if (response.usage.cached_input_tokens == 0) {
    response.usage.cached_input_tokens = detail::IntOr0(usage, "prompt_cache_hit_tokens");
  }
  response.usage.reasoning_tokens =
      detail::IntOr0(usage.value("completion_tokens_details", json::object()), "reasoning_tokens");
  return response;
}

std::vector<std::string> OpenAiChatModel::ProviderHeaders() const {
  if (key().empty()) return {};
  return {absl::StrCat("Authorization: Bearer ", key())};
}

absl::StatusOr<ChatResponse> OpenAiChatModel::DecodeResponse(const std::string& body) const {
  return DecodeOpenAiResponse(body);
}

}  // namespace mkb
