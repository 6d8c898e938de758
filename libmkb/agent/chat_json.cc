#include "libmkb/agent/chat_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb {
namespace {

using nlohmann::json;

json ToolCallsToJson(const std::vector<ToolCall>& calls) {
  json out = json::array();
  for (const ToolCall& call : calls) {
    out.push_back({{"id", call.id},
                   {"name", call.name},
                   {"arguments", detail::ParseOrString(call.arguments_json)}});
  }
  return out;
}

json MessageJson(const ChatMessage& m) {
  json out = {{"role", std::string(ChatRoleName(m.role))}, {"content", m.text}};
  if (!m.tool_calls.empty()) out["tool_calls"] = ToolCallsToJson(m.tool_calls);
  if (!m.tool_call_id.empty()) out["tool_call_id"] = m.tool_call_id;
  if (!m.tool_name.empty()) out["name"] = m.tool_name;
  if (!m.reasoning.empty()) out["reasoning"] = m.reasoning;
  return out;
}

json UsageJson(const TokenUsage& u) {
  return {{"input_tokens", u.input_tokens},
          {"cached_input_tokens", u.cached_input_tokens},
          {"cache_write_tokens", u.cache_write_tokens},
          {"output_tokens", u.output_tokens},
          {"reasoning_tokens", u.reasoning_tokens}};
}

absl::StatusOr<std::vector<ToolCall>> ToolCallsFromJson(const json& value,
                                                        const std::string& path) {
  std::vector<ToolCall> calls;
  if (value.is_null()) return calls;
  if (!value.is_array()) return absl::InvalidArgumentError(absl::StrCat(path, ": must be a list"));
  for (size_t i = 0; i < value.size(); ++i) {
    const json& c = value[i];
    const std::string at = absl::StrCat(path, "[", i, "]");
    if (!c.is_object()) return absl::InvalidArgumentError(absl::StrCat(at, ": must be an object"));
    ToolCall call;
    // Accept the OpenAI shape {"function": {"name", "arguments"}} as well as the flat one.
    const json& fn = c.contains("function") && c["function"].is_object() ? c["function"] : c;
    if (!fn.contains("name") || !fn["name"].is_string() || fn["name"].get<std::string>().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".name: required (a string)"));
    }
    call.name = fn["name"].get<std::string>();
    if (c.contains("id") && c["id"].is_string()) call.id = c["id"].get<std::string>();
    if (call.id.empty()) call.id = absl::StrCat("call_", i);
    if (!fn.contains("arguments") || fn["arguments"].is_null()) {
      call.arguments_json = "{}";
    } else if (fn["arguments"].is_string()) {
      call.arguments_json = fn["arguments"].get<std::string>();
      if (call.arguments_json.empty()) call.arguments_json = "{}";
    } else if (fn["arguments"].is_object()) {
      call.arguments_json = fn["arguments"].dump();
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".arguments: must be an object or JSON text"));
    }
    calls.push_back(std::move(call));
  }
  return calls;
}

absl::StatusOr<std::string> OptionalString(const json& object, const char* key,
                                           const std::string& path) {
  if (!object.contains(key) || object[key].is_null()) return std::string();
  if (!object[key].is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(path, key, ": must be a string"));
  }
  return object[key].get<std::string>();
}

absl::StatusOr<int64_t> OptionalInt(const json& object, const char* key, const std::string& path) {
  if (!object.contains(key) || object[key].is_null()) return 0;
  if (!object[key].is_number_integer() && !object[key].is_number_unsigned()) {
    return absl::InvalidArgumentError(absl::StrCat(path, key, ": must be an integer"));
  }
  return object[key].get<int64_t>();
}

}  // namespace

std::string ChatMessageToJson(const ChatMessage& message) { return MessageJson(message).dump(); }

std::string TokenUsageToJson(const TokenUsage& usage) { return UsageJson(usage).dump(); }

std::string ChatRequestToJson(const ChatRequest& request) {
  json messages = json::array();
  for (const ChatMessage& m : request.messages) messages.push_back(MessageJson(m));
  json tools = json::array();
  for (const ToolDefinition& t : request.tools) {
    tools.push_back({{"name", t.name},
                     {"description", t.description},
                     {"parameters", detail::ParseOrString(t.parameters_schema_json)}});
  }
  return json{
      {"messages", messages}, {"tools", tools}, {"max_output_tokens", request.max_output_tokens}}
      .dump();
}

std::string ChatResponseToJson(const ChatResponse& r) {
  json out = {{"content", r.message.text},
              {"tool_calls", ToolCallsToJson(r.message.tool_calls)},
              {"usage", UsageJson(r.usage)},
              {"stop_reason", r.stop_reason},
              {"model", r.model}};
  if (!r.message.reasoning.empty()) out["reasoning"] = r.message.reasoning;
  return out.dump();
}

absl::StatusOr<ChatRequest> ChatRequestFromJson(absl::string_view text) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("request: not a JSON object");
  }
  ChatRequest request;
  if (!root.contains("messages") || !root["messages"].is_array()) {
    return absl::InvalidArgumentError("request.messages: required (a list)");
  }
  for (size_t i = 0; i < root["messages"].size(); ++i) {
    const json& m = root["messages"][i];
    const std::string path = absl::StrCat("request.messages[", i, "].");
    if (!m.is_object()) return absl::InvalidArgumentError(path + ": must be an object");
    ChatMessage message;
    auto role = OptionalString(m, "role", path);
    if (!role.ok()) return role.status();
    auto parsed_role = ParseChatRole(*role);
    if (!parsed_role.ok())
      return absl::InvalidArgumentError(absl::StrCat(path, parsed_role.status().message()));
    message.role = *parsed_role;
    auto content = OptionalString(m, "content", path);
    if (!content.ok()) return content.status();
    message.text = *std::move(content);
    auto calls = ToolCallsFromJson(m.value("tool_calls", json()), path + "tool_calls");
    if (!calls.ok()) return calls.status();
    message.tool_calls = *std::move(calls);
    auto id = OptionalString(m, "tool_call_id", path);
    if (!id.ok()) return id.status();
    message.tool_call_id = *std::move(id);
    auto name = OptionalString(m, "name", path);
    if (!name.ok()) return name.status();
    message.tool_name = *std::move(name);
    request.messages.push_back(std::move(message));
  }
  if (root.contains("tools") && !root["tools"].is_null()) {
    if (!root["tools"].is_array())
      return absl::InvalidArgumentError("request.tools: must be a list");
    for (size_t i = 0; i < root["tools"].size(); ++i) {
      const json& t = root["tools"][i];
      const std::string path = absl::StrCat("request.tools[", i, "].");
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) {
        return absl::InvalidArgumentError(path + "name: required (a string)");
      }
      ToolDefinition tool;
      tool.name = t["name"].get<std::string>();
      tool.description = t.value("description", "");
      tool.parameters_schema_json = t.contains("parameters")
                                        ? t["parameters"].dump()
                                        : R"({"type":"object","properties":{}})";
      request.tools.push_back(std::move(tool));
    }
  }
  auto max_tokens = OptionalInt(root, "max_output_tokens", "request.");
  if (!max_tokens.ok()) return max_tokens.status();
  request.max_output_tokens = static_cast<int>(*max_tokens);
  return request;
}

absl::StatusOr<ChatResponse> ChatResponseFromJson(absl::string_view text) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("response: not valid JSON");
  ChatResponse response;
  response.message.role = ChatRole::kAssistant;
  if (root.is_string()) {
    response.message.text = root.get<std::string>();
    return response;
  }
  if (!root.is_object()) {
    return absl::InvalidArgumentError("response: must be a string or an object");
  }
  const std::string path = "response.";
  auto content = OptionalString(root, "content", path);
  if (!content.ok()) return content.status();
  response.message.text = *std::move(content);
  auto reasoning = OptionalString(root, "reasoning", path);
  if (!reasoning.ok()) return reasoning.status();
  response.message.reasoning = *std::move(reasoning);
  auto calls = ToolCallsFromJson(root.value("tool_calls", json()), "response.tool_calls");
  if (!calls.ok()) return calls.status();
  response.message.tool_calls = *std::move(calls);
  auto stop = OptionalString(root, "stop_reason", path);
  if (!stop.ok()) return stop.status();
  response.stop_reason = *std::move(stop);
  auto model = OptionalString(root, "model", path);
  if (!model.ok()) return model.status();
  response.model = *std::move(model);
  if (root.contains("usage") && !root["usage"].is_null()) {
    const json& u = root["usage"];
    if (!u.is_object()) return absl::InvalidArgumentError("response.usage: must be an object");
    const std::string upath = "response.usage.";
    int64_t* fields[] = {&response.usage.input_tokens, &response.usage.cached_input_tokens,
                         &response.usage.cache_write_tokens, &response.usage.output_tokens,
                         &response.usage.reasoning_tokens};
    const char* names[] = {"input_tokens", "cached_input_tokens", "cache_write_tokens",
                           "output_tokens", "reasoning_tokens"};
    for (int i = 0; i < 5; ++i) {
      auto v = OptionalInt(u, names[i], upath);
      if (!v.ok()) return v.status();
      *fields[i] = *v;
    }
  }
  return response;
}

}  // namespace mkb
