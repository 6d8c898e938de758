#include "libmkb/agent/detail/api_call.h"

#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libmkb/agent/detail/json_util.h"

namespace mkb::detail {
namespace {

using nlohmann::json;

std::string Lower(const HttpResponse& response) { return absl::AsciiStrToLower(response.body); }

bool IsContextOverflow(const std::string& lower_body) {
  for (const char* marker :
       {"context_length_exceeded", "maximum context length", "context window", "prompt is too long",
        "too many tokens", "input is too long", "reduce the length"}) {
    if (absl::StrContains(lower_body, marker)) return true;
  }
  return false;
}

std::string Describe(const HttpResponse& response) {
  return absl::StrCat("HTTP ", response.status, ": ", ApiErrorMessage(response));
}

}  // namespace

std::string ApiErrorMessage(const HttpResponse& response) {
  json body = ParseJson(response.body);
  if (!body.is_discarded() && body.is_object()) {
    auto it = body.find("error");
    if (it != body.end()) {
      if (it->is_string()) return it->get<std::string>();
      const std::string message = StringOrEmpty(*it, "message");
      const std::string type = StringOrEmpty(*it, "type");
      const std::string code = StringOrEmpty(*it, "code");
      std::string out = message.empty() ? it->dump() : message;
      if (!type.empty() || !code.empty()) {
        absl::StrAppend(&out, " [", type, type.empty() || code.empty() ? "" : "/", code, "]");
      }
      return out;
    }
    const std::string message = StringOrEmpty(body, "message");
    if (!message.empty()) return message;
    const std::string detail = StringOrEmpty(body, "detail");
    if (!detail.empty()) return detail;
  }
  std::string start = response.body.substr(0, 300);
  if (response.body.size() > 300) start += "...";
  return start.empty() ? "(empty body)" : start;
}

bool IsSpendCap(const HttpResponse& response) {
  if (response.status == 402) return true;
  if (response.status != 429 && response.status != 400 && response.status != 403) return false;
  const std::string lower = Lower(response);
  for (const char* marker :
       {"insufficient_quota", "exceeded your current quota", "billing", "credit balance",
        "insufficient credits", "spend limit", "spending limit", "budget has been exceeded",
        "budget_exceeded", "usage limit", "out of credits"}) {
    if (absl::StrContains(lower, marker)) return true;
  }
  return false;
}

absl::Status StatusForHttpError(const HttpResponse& response, const ApiCallContext& context) {
  const std::string what = absl::StrCat(context.model_id, ": ", Describe(response));
  if (IsSpendCap(response)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("spend cap: ", what,
                     " (the account's quota, credits or budget are used up; retrying "
                     "will not help)"));
  }
  const long status = response.status;  // NOLINT(runtime/int)
  if (status == 401) {
    return absl::UnauthenticatedError(
        absl::StrCat(what, " (the API key from ", context.key_source, " was rejected)"));
  }
  if (status == 403) {
    return absl::PermissionDeniedError(absl::StrCat(what, " (the key from ", context.key_source,
                                                    " may not use this model or endpoint)"));
  }
  if (status == 404) {
    return absl::NotFoundError(absl::StrCat(what, " (no such model or endpoint; check the id)"));
  }
  if (status == 413 || ((status == 400 || status == 422) && IsContextOverflow(Lower(response)))) {
    return absl::OutOfRangeError(absl::StrCat("context window exceeded: ", what));
  }
  if (IsRetryableHttpStatus(status)) return absl::UnavailableError(what);
  return absl::InvalidArgumentError(absl::StrCat("the API rejected the request: ", what));
}

absl::StatusOr<ChatResponse> CallWithRetries(HttpClient& client, const HttpRequest& request,
                                             const ApiCallContext& context,
                                             const ResponseDecoder& decode) {
  const absl::Time start = absl::Now();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int max_attempts = std::max(1, context.retry.max_attempts);
  std::string last_failure;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    std::optional<absl::Duration> server_wish;
    absl::StatusOr<HttpResponse> response = client.Post(request);
    if (!response.ok()) {
      if (absl::IsResourceExhausted(response.status())) return response.status();
      last_failure = std::string(response.status().message());
    } else if (response->status >= 200 && response->status < 300) {
      absl::StatusOr<ChatResponse> decoded = decode(response->body);
      if (decoded.ok()) {
        decoded->seconds = absl::ToDoubleSeconds(absl::Now() - start);
        decoded->http_attempts = attempt;
        return decoded;
      }
      last_failure = absl::StrCat("HTTP ", response->status, " with an unusable body (",
                                  decoded.status().message(), ")");
    } else {
      const std::string should_retry = absl::AsciiStrToLower(response->Header("x-should-retry"));
      const bool retryable = should_retry == "true" ||
                             (should_retry != "false" && IsRetryableHttpStatus(response->status) &&
                              !IsSpendCap(*response));
      if (!retryable) return StatusForHttpError(*response, context);
      last_failure = Describe(*response);
      server_wish = ServerRetryAfter(*response, absl::Now());
    }
    if (attempt == max_attempts) break;
    absl::SleepFor(RetryDelay(context.retry, attempt - 1, server_wish, uniform(rng)));
  }
  return absl::UnavailableError(
      absl::StrCat(context.model_id, ": no usable answer after ", max_attempts, " attempt(s) over ",
                   absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))),
                   "; last: ", last_failure));
}

}  // namespace mkb::detail
