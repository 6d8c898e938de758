// Model ids, the provider-neutral JSON, the wire formats of both APIs, error classification,
// retry delays and prices. The HTTP exchanges themselves are tested against a loopback mock
// server in tests/python/test_agent_clients.py.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include "libmkb/agent/anthropic_chat_model.h"
#include "libmkb/agent/chat_json.h"
#include "libmkb/agent/detail/api_call.h"
#include "libmkb/agent/model_factory.h"
#include "libmkb/agent/model_id.h"
#include "libmkb/agent/openai_chat_model.h"
#include "libmkb/agent/price_table.h"
#include "libmkb/agent/retry_policy.h"
#include "libmkb/agent/tools.h"

using nlohmann::json;

namespace {

mkb::ChatRequest Conversation() {
  mkb::ChatRequest request;
  request.messages.push_back(mkb::TextMessage(mkb::ChatRole::kSystem, "be brief"));
  request.messages.push_back(mkb::TextMessage(mkb::ChatRole::kUser, "write the kernel"));
  mkb::ChatMessage assistant = mkb::TextMessage(mkb::ChatRole::kAssistant, "");
  assistant.tool_calls = {{"c1", "bash", R"({"command":"ls"})"}, {"c2", "submit", "{}"}};
  request.messages.push_back(assistant);
  mkb::ChatMessage r1 = mkb::TextMessage(mkb::ChatRole::kTool, "kernel.py\n");
  r1.tool_call_id = "c1";
  r1.tool_name = "bash";
  mkb::ChatMessage r2 = mkb::TextMessage(mkb::ChatRole::kTool, "verdict: passed");
  r2.tool_call_id = "c2";
  r2.tool_name = "submit";
  request.messages.push_back(r1);
  request.messages.push_back(r2);
  request.tools = mkb::AttemptTools();
  return request;
}

mkb::HttpResponse Response(long status, const std::string& body,
                           std::vector<std::pair<std::string, std::string>> headers = {}) {
  mkb::HttpResponse r;
  r.status = status;
  r.body = body;
  r.headers = std::move(headers);
  return r;
}

}  // namespace

TEST_CASE("model ids name the provider, the model and the base URL") {
  auto openai = mkb::ParseModelId("openai/gpt-5");
  REQUIRE(openai.ok());
  CHECK(openai->provider == mkb::ModelProvider::kOpenAi);
  CHECK(openai->model == "gpt-5");

  auto compatible =
      mkb::ParseModelId("openai-compatible/meta-llama/Llama-3.1-8B@http://gpu:8000/v1/");
  REQUIRE(compatible.ok());
  CHECK(compatible->model == "meta-llama/Llama-3.1-8B");
  CHECK(compatible->base_url == "http://gpu:8000/v1");

  CHECK(mkb::ParseModelId("anthropic/claude-sonnet-4-5")->provider ==
        mkb::ModelProvider::kAnthropic);
  CHECK(mkb::ParseModelId("scripted/demo")->provider == mkb::ModelProvider::kScripted);

  for (const char* bad : {"gpt-5", "azure/gpt", "openai/", "openai-compatible/m",
                          "openai-compatible/m@ftp://x", "scripted/other"}) {
    INFO(bad);
    auto id = mkb::ParseModelId(bad);
    REQUIRE_FALSE(id.ok());
    CHECK(absl::IsInvalidArgument(id.status()));
    CHECK(id.status().message().find(bad) != std::string::npos);
  }
}

TEST_CASE("the neutral JSON round-trips requests and responses") {
  const mkb::ChatRequest request = Conversation();
  auto back = mkb::ChatRequestFromJson(mkb::ChatRequestToJson(request));
  REQUIRE(back.ok());
  REQUIRE(back->messages.size() == request.messages.size());
  CHECK(back->messages[2].tool_calls[0].name == "bash");
  CHECK(json::parse(back->messages[2].tool_calls[0].arguments_json)["command"] == "ls");
  CHECK(back->messages[3].tool_call_id == "c1");
  CHECK(back->tools.size() == 3);

  auto response = mkb::ChatResponseFromJson(
      R"({"content":"ok","tool_calls":[{"name":"bash","arguments":"{\"command\":\"pwd\"}"}],
          "usage":{"input_tokens":10,"output_tokens":3}})");
  REQUIRE(response.ok());
  CHECK(response->message.tool_calls[0].id == "call_0");
  CHECK(response->usage.input_tokens == 10);
  CHECK(mkb::ChatResponseFromJson(R"("just text")")->message.text == "just text");

  auto bad = mkb::ChatResponseFromJson(R"({"tool_calls":[{"arguments":{}}]})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("response.tool_calls[0].name") != std::string::npos);
}

TEST_CASE("OpenAI requests carry function tools and tool results") {
  mkb::ModelOptions options;
  options.api_key = "k";
  options.max_output_tokens = 4096;
  options.extra_body_json = R"({"reasoning_effort":"high"})";
  auto model = mkb::OpenAiChatModel::Create(*mkb::ParseModelId("openai/gpt-5"), options);
  REQUIRE(model.ok());
  CHECK((*model)->endpoint() == "https://api.openai.com/v1/chat/completions");
  const json body = json::parse((*model)->EncodeRequest(Conversation()));
  CHECK(body["model"] == "gpt-5");
  CHECK(body["max_completion_tokens"] == 4096);
  CHECK(body["reasoning_effort"] == "high");
  CHECK(body["messages"][0]["role"] == "system");
  CHECK(body["messages"][2]["content"].is_null());
  CHECK(body["messages"][2]["tool_calls"][0]["function"]["arguments"] == R"({"command":"ls"})");
  CHECK(body["messages"][3]["role"] == "tool");
  CHECK(body["messages"][3]["tool_call_id"] == "c1");
  CHECK(body["tools"][0]["type"] == "function");
  CHECK(body["tools"][0]["function"]["parameters"]["required"][0] == "command");

  auto local = mkb::OpenAiChatModel::Create(
      *mkb::ParseModelId("openai-compatible/qwen@http://127.0.0.1:8000/v1"), options);
  REQUIRE(local.ok());
  CHECK((*local)->endpoint() == "http://127.0.0.1:8000/v1/chat/completions");
  CHECK(json::parse((*local)->EncodeRequest(Conversation())).contains("max_tokens"));
}

TEST_CASE("both clients refuse an extra_body_json that is not a JSON object, naming it") {
  mkb::ModelOptions options;
  options.api_key = "k";
  options.extra_body_json = "[1, 2]";
  auto openai = mkb::OpenAiChatModel::Create(*mkb::ParseModelId("openai/gpt-5"), options);
  REQUIRE_FALSE(openai.ok());
  CHECK(openai.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(openai.status().message() == "extra_body_json: must be a JSON object");
  auto anthropic =
      mkb::AnthropicChatModel::Create(*mkb::ParseModelId("anthropic/claude-sonnet-4-5"), options);
  REQUIRE_FALSE(anthropic.ok());
  CHECK(anthropic.status().message() == "extra_body_json: must be a JSON object");
}

TEST_CASE("OpenAI responses give tool calls, cached and reasoning tokens") {
  auto r = mkb::DecodeOpenAiResponse(R"({
    "model": "gpt-5-2025", "choices": [{"finish_reason": "tool_calls", "message": {
      "role": "assistant", "content": null, "reasoning_content": "think",
      "tool_calls": [{"id": "call_9", "type": "function",
                      "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}}],
    "usage": {"prompt_tokens": 1000, "completion_tokens": 300,
              "prompt_tokens_details": {"cached_tokens": 800},
              "completion_tokens_details": {"reasoning_tokens": 200}}})");
  REQUIRE(r.ok());
  CHECK(r->message.text.empty());
  CHECK(r->message.reasoning == "think");
  REQUIRE(r->message.tool_calls.size() == 1);
  CHECK(r->message.tool_calls[0].id == "call_9");
  CHECK(r->usage.input_tokens == 1000);
  CHECK(r->usage.cached_input_tokens == 800);
  CHECK(r->usage.output_tokens == 300);
  CHECK(r->usage.reasoning_tokens == 200);
  CHECK(r->stop_reason == "tool_calls");
  CHECK_FALSE(mkb::DecodeOpenAiResponse(R"({"choices": [{"message": {"content": "cut)").ok());
}

TEST_CASE("Anthropic requests merge tool results into one user turn and mark cache points") {
  mkb::ModelOptions options;
  options.api_key = "k";
  auto model =
      mkb::AnthropicChatModel::Create(*mkb::ParseModelId("anthropic/claude-sonnet-4-5"), options);
  REQUIRE(model.ok());
  CHECK((*model)->endpoint() == "https://api.anthropic.com/v1/messages");
  const json body = json::parse((*model)->EncodeRequest(Conversation()));
  CHECK(body["max_tokens"] == mkb::kAnthropicDefaultMaxTokens);
  CHECK(body["system"][0]["text"] == "be brief");
  CHECK(body["system"][0]["cache_control"]["type"] == "ephemeral");
  REQUIRE(body["messages"].size() == 3);  // user, assistant, user (both results)
  CHECK(body["messages"][1]["content"][0]["type"] == "tool_use");
  CHECK(body["messages"][1]["content"][0]["input"]["command"] == "ls");
  const json& results = body["messages"][2]["content"];
  REQUIRE(results.size() == 2);
  CHECK(results[0]["tool_use_id"] == "c1");
  CHECK(results[1]["tool_use_id"] == "c2");
  CHECK(results[1]["cache_control"]["type"] == "ephemeral");
  CHECK(body["tools"][0]["input_schema"]["type"] == "object");
}

TEST_CASE("Anthropic usage counts every prompt token as input") {
  auto r = mkb::DecodeAnthropicResponse(R"({
    "model": "claude", "stop_reason": "tool_use",
    "content": [{"type": "text", "text": "listing"},
                {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}],
    "usage": {"input_tokens": 50, "output_tokens": 20, "cache_read_input_tokens": 900,
              "cache_creation_input_tokens": 100}})");
  REQUIRE(r.ok());
  CHECK(r->message.text == "listing");
  CHECK(r->message.tool_calls[0].id == "toolu_1");
  CHECK(json::parse(r->message.tool_calls[0].arguments_json)["command"] == "ls");
  CHECK(r->usage.input_tokens == 1050);
  CHECK(r->usage.cached_input_tokens == 900);
  CHECK(r->usage.cache_write_tokens == 100);
  CHECK(r->usage.output_tokens == 20);
  CHECK_FALSE(r->message.provider_content_json.empty());
}

TEST_CASE("keys come from the environment, and a missing one is a clear error") {
  ::unsetenv("ANTHROPIC_API_KEY");
  auto missing = mkb::MakeChatModel("anthropic/claude-sonnet-4-5");
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::IsFailedPrecondition(missing.status()));
  CHECK(missing.status().message().find("ANTHROPIC_API_KEY") != std::string::npos);
  ::setenv("ANTHROPIC_API_KEY", "from-env", 1);
  CHECK(mkb::MakeChatModel("anthropic/claude-sonnet-4-5").ok());
  ::unsetenv("ANTHROPIC_API_KEY");
  // A local server needs no key.
  CHECK(mkb::MakeChatModel("openai-compatible/m@http://127.0.0.1:1/v1").ok());
  auto scripted = mkb::MakeChatModel("scripted/demo");
  REQUIRE(scripted.ok());
  CHECK_FALSE((*scripted)->is_llm());
}

TEST_CASE("HTTP errors map to the codes ChatModel promises") {
  mkb::detail::ApiCallContext context{"openai/gpt-5", "OPENAI_API_KEY", {}};
  auto unauthorized = mkb::detail::StatusForHttpError(
      Response(401, R"({"error":{"message":"Incorrect API key","type":"invalid_request_error"}})"),
      context);
  CHECK(absl::IsUnauthenticated(unauthorized));
  CHECK(unauthorized.message().find("OPENAI_API_KEY") != std::string::npos);
  CHECK(unauthorized.message().find("Incorrect API key") != std::string::npos);
  CHECK(absl::IsPermissionDenied(mkb::detail::StatusForHttpError(Response(403, "{}"), context)));

  const auto quota = Response(
      429,
      R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}})");
  CHECK(mkb::detail::IsSpendCap(quota));
  auto cap = mkb::detail::StatusForHttpError(quota, context);
  CHECK(absl::IsResourceExhausted(cap));
  CHECK(cap.message().rfind("spend cap", 0) == 0);
  CHECK(mkb::detail::IsSpendCap(Response(
      400,
      R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}})")));
  CHECK_FALSE(mkb::detail::IsSpendCap(
      Response(429, R"({"error":{"message":"Rate limit reached for requests per min"}})")));

  CHECK(absl::IsOutOfRange(mkb::detail::StatusForHttpError(
      Response(400, R"({"error":{"code":"context_length_exceeded","message":"too long"}})"),
      context)));
  auto bad = mkb::detail::StatusForHttpError(
      Response(400, R"({"error":{"message":"Unknown parameter: 'foo'"}})"), context);
  CHECK(absl::IsInvalidArgument(bad));
  CHECK(bad.message().find("Unknown parameter") != std::string::npos);
  CHECK(absl::IsNotFound(mkb::detail::StatusForHttpError(Response(404, "nope"), context)));
}

TEST_CASE("retries wait as the server asks, up to the cap, else back off with jitter") {
  for (long status : {408L, 409L, 429L, 500L, 502L, 503L, 529L})
    CHECK(mkb::IsRetryableHttpStatus(status));
  for (long status : {400L, 401L, 403L, 404L, 422L})
    CHECK_FALSE(mkb::IsRetryableHttpStatus(status));

  const absl::Time now = absl::FromUnixSeconds(1700000000);
  CHECK(*mkb::ServerRetryAfter(Response(429, "", {{"retry-after-ms", "1500"}}), now) ==
        absl::Milliseconds(1500));
  CHECK(*mkb::ServerRetryAfter(Response(429, "", {{"retry-after", "7"}}), now) == absl::Seconds(7));
  // retry-after-ms wins over retry-after.
  CHECK(*mkb::ServerRetryAfter(Response(429, "", {{"retry-after", "7"}, {"retry-after-ms", "20"}}),
                               now) == absl::Milliseconds(20));
  const std::string date =
      absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", now + absl::Seconds(30), absl::UTCTimeZone());
  CHECK(*mkb::ServerRetryAfter(Response(503, "", {{"retry-after", date}}), now) ==
        absl::Seconds(30));
  CHECK_FALSE(mkb::ServerRetryAfter(Response(503, ""), now).has_value());

  mkb::RetryPolicy policy;
  CHECK(mkb::RetryDelay(policy, 0, absl::Seconds(3600), 0.5) == absl::Seconds(60));
  CHECK(mkb::RetryDelay(policy, 0, absl::Seconds(2), 0.5) == absl::Seconds(2));
  CHECK(mkb::RetryDelay(policy, 0, std::nullopt, 0.0) == absl::Seconds(1));
  CHECK(mkb::RetryDelay(policy, 3, std::nullopt, 0.0) == absl::Seconds(8));
  CHECK(mkb::RetryDelay(policy, 20, std::nullopt, 0.0) == absl::Seconds(60));
  const absl::Duration jittered = mkb::RetryDelay(policy, 3, std::nullopt, 0.999);
  CHECK(jittered >= absl::Seconds(4));
  CHECK(jittered < absl::Seconds(8));
}

TEST_CASE("costs come from the longest matching price pattern") {
  mkb::PriceTable table = mkb::PriceTable::BuiltIn();
  REQUIRE(table.Find("openai/gpt-5-mini").has_value());
  CHECK(table.Find("openai/gpt-5-mini")->input == Catch::Approx(0.25));
  CHECK(table.Find("openai/gpt-5")->input == Catch::Approx(1.25));
  CHECK_FALSE(table.Find("openai-compatible/x@http://h").has_value());
  CHECK(table.Cost("scripted/demo", {1000, 0, 0, 1000, 0}) == 0);

  auto custom = mkb::PriceTable::FromJson(
      R"({"openai-compatible/*": {"input": 1, "cached_input": 0.5, "output": 2}})");
  REQUIRE(custom.ok());
  mkb::TokenUsage usage;
  usage.input_tokens = 3'000'000;
  usage.cached_input_tokens = 2'000'000;
  usage.output_tokens = 1'000'000;
  CHECK(custom->Cost("openai-compatible/q@http://h", usage) == Catch::Approx(1 + 1 + 2));
  auto bad = mkb::PriceTable::FromJson(R"({"x/*": {"inptu": 1}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("inptu") != std::string::npos);
}
