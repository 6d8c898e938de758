// The request loop every HTTP model client shares: POST, judge the answer, retry what is
// transient (libmkb/agent/retry_policy.h), and turn what is not into the error codes that
// ChatModel promises (libmkb/agent/chat.h).
#ifndef LIBMKB_AGENT_DETAIL_API_CALL_H_
#define LIBMKB_AGENT_DETAIL_API_CALL_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "libmkb/agent/chat.h"
#include "libmkb/agent/http_client.h"
#include "libmkb/agent/retry_policy.h"

namespace mkb::detail {

struct ApiCallContext {
  std::string model_id;    // for messages: "anthropic/claude-sonnet-4-5"
  std::string key_source;  // where the key came from, for 401 / 403 messages: "ANTHROPIC_API_KEY"
  RetryPolicy retry;
};

// Decodes a 2xx body. An error means the body was cut short or malformed: retried.
using ResponseDecoder = std::function<absl::StatusOr<ChatResponse>(const std::string& body)>;

// Posts `request` until it succeeds, fails for good, or retries run out (UnavailableError
// naming the attempts and the last failure). Fills seconds and http_attempts.
absl::StatusOr<ChatResponse> CallWithRetries(HttpClient& client, const HttpRequest& request,
                                             const ApiCallContext& context,
                                             const ResponseDecoder& decode);

// The error a non-retryable (or exhausted) HTTP answer stands for. `body` is the API's error
// JSON ({"error": {"message", "type", "code"}} for both providers).
absl::Status StatusForHttpError(const HttpResponse& response, const ApiCallContext& context);

// Whether a response is a spend cap / quota / credit refusal rather than a rate limit.
bool IsSpendCap(const HttpResponse& response);

// The API's own error message (or the start of the body when it has none).
std::string ApiErrorMessage(const HttpResponse& response);

}  // namespace mkb::detail

#endif  // LIBMKB_AGENT_DETAIL_API_CALL_H_
