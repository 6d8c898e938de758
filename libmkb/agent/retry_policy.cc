#include "libmkb/agent/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace mkb {

bool IsRetryableHttpStatus(long status) {  // NOLINT(runtime/int)
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

std::optional<absl::Duration> ServerRetryAfter(const HttpResponse& response, absl::Time now) {
  const std::string ms = response.Header("retry-after-ms");
  double value = 0;
  if (!ms.empty() && absl::SimpleAtod(absl::StripAsciiWhitespace(ms), &value) &&
      std::isfinite(value)) {
    return absl::Milliseconds(std::max(0.0, value));
  }
  const std::string after = response.Header("retry-after");
  if (after.empty()) return std::nullopt;
  if (absl::SimpleAtod(absl::StripAsciiWhitespace(after), &value) && std::isfinite(value)) {
    return absl::Seconds(std::max(0.0, value));
  }
  absl::Time when;
  std::string error;
  if (absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", after, absl::UTCTimeZone(), &when, &error)) {
    return std::max(absl::ZeroDuration(), when - now);
  }
  return std::nullopt;
}

absl::Duration RetryDelay(const RetryPolicy& policy, int retry,
                          std::optional<absl::Duration> server_wish, double uniform01) {
  if (server_wish.has_value()) {
    return std::clamp(*server_wish, absl::ZeroDuration(), policy.max_retry_after);
  }
  const double factor = std::pow(std::max(1.0, policy.backoff_multiplier), std::max(0, retry));
  absl::Duration backoff = std::min(policy.initial_backoff * factor, policy.max_backoff);
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  return backoff * (1.0 - jitter * std::clamp(uniform01, 0.0, 1.0));
}

}  // namespace mkb
