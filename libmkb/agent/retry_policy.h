// When and how long the model clients wait before retrying a request.
//
// Retried: transport failures (connection refused or reset, a body cut short), request
// timeouts, and HTTP 408, 409, 429 and 5xx. A server's wish is honoured -- `retry-after-ms`
// (milliseconds), else `retry-after` (seconds or an HTTP date) -- up to max_retry_after;
// otherwise the wait grows exponentially with jitter. `x-should-retry: false` stops retrying.
#ifndef LIBMKB_AGENT_RETRY_POLICY_H_
#define LIBMKB_AGENT_RETRY_POLICY_H_

#include <optional>

#include "absl/time/time.h"
#include "libmkb/agent/http_client.h"

namespace mkb {

struct RetryPolicy {
  int max_attempts = 8;  // the first request and up to 7 retries
  absl::Duration initial_backoff = absl::Seconds(1);
  double backoff_multiplier = 2.0;
  absl::Duration max_backoff = absl::Seconds(60);
  absl::Duration max_retry_after = absl::Seconds(60);  // cap on a server's Retry-After
  // The backoff is scaled by a uniform factor in [1 - jitter, 1], so that clients that failed
  // together do not retry together.
  double jitter = 0.5;
};

// 408, 409, 429 and 500-599.
bool IsRetryableHttpStatus(long status);  // NOLINT(runtime/int)

// The wait `response` asks for: retry-after-ms, else retry-after as delta-seconds or an
// HTTP date (relative to `now`). nullopt when neither header is present or parses; negative
// values count as zero.
std::optional<absl::Duration> ServerRetryAfter(const HttpResponse& response, absl::Time now);

// The wait before retry number `retry` (0 for the first retry): `server_wish` capped at
// max_retry_after when given, else initial_backoff * multiplier^retry capped at max_backoff,
// scaled by (1 - jitter * uniform01). `uniform01` is a uniform draw in [0, 1).
absl::Duration RetryDelay(const RetryPolicy& policy, int retry,
                          std::optional<absl::Duration> server_wish, double uniform01);

}  // namespace mkb

#endif  // LIBMKB_AGENT_RETRY_POLICY_H_
