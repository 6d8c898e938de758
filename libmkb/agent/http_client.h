// HTTP POST over libcurl, for the model clients. One HttpClient owns one curl easy handle, so
// that consecutive requests of an attempt reuse their connection.
#ifndef LIBMKB_AGENT_HTTP_CLIENT_H_
#define LIBMKB_AGENT_HTTP_CLIENT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace mkb {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;             // "Name: value"
  std::string body;                             // sent as the POST body
  absl::Duration timeout = absl::Seconds(600);  // the whole exchange
  absl::Duration connect_timeout = absl::Seconds(30);
  size_t max_response_bytes = size_t{64} << 20;  // larger bodies fail the request
};

struct HttpResponse {
  long status = 0;                                           // NOLINT(runtime/int): curl's type
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;

  // The last value of header `name` (any case), "" when absent.
  std::string Header(absl::string_view name) const;
};

// Owns a curl easy handle (CURL*). Move-only; not for use by two threads at once.
class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(HttpClient&& other) noexcept;
  HttpClient& operator=(HttpClient&& other) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any HTTP status is a response (the caller judges it). Transport failures are errors:
  // DeadlineExceededError when `timeout` ran out, UnavailableError when the server could not
  // be reached or the connection broke (the message carries curl's reason),
  // ResourceExhaustedError for a body over max_response_bytes.
  absl::StatusOr<HttpResponse> Post(const HttpRequest& request);

 private:
  void* handle_ = nullptr;  // CURL*
};

}  // namespace mkb

#endif  // LIBMKB_AGENT_HTTP_CLIENT_H_
