#include "libmkb/agent/http_client.h"

#include <curl/curl.h>

#include <memory>

#include "absl/base/call_once.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace mkb {
namespace {

absl::once_flag global_init_once;

void GlobalInit() {
  absl::call_once(global_init_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

struct Transfer {
  HttpResponse* response;
  size_t max_bytes;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (transfer->response->body.size() + n > transfer->max_bytes) {
    transfer->too_large = true;
    return 0;  // makes curl fail the transfer with CURLE_WRITE_ERROR
  }
  transfer->response->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  absl::string_view line(data, n);
  line = absl::StripTrailingAsciiWhitespace(line);
  // A new status line (after "100 Continue" or a redirect) starts a new header block.
  if (absl::StartsWith(line, "HTTP/")) {
    transfer->response->headers.clear();
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return n;
  transfer->response->headers.emplace_back(
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon))),
      std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  return n;
}

}  // namespace

std::string HttpResponse::Header(absl::string_view name) const {
  const std::string lower = absl::AsciiStrToLower(name);
  std::string value;
  for (const auto& [key, v] : headers) {
    if (key == lower) value = v;
  }
  return value;
}

HttpClient::HttpClient() {
  GlobalInit();
  handle_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (handle_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle_));
}

HttpClient::HttpClient(HttpClient&& other) noexcept : handle_(other.handle_) {
  other.handle_ = nullptr;
}

HttpClient& HttpClient::operator=(HttpClient&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle_));
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

absl::StatusOr<HttpResponse> HttpClient::Post(const HttpRequest& request) {
  if (handle_ == nullptr) {
    handle_ = curl_easy_init();
    if (handle_ == nullptr) return absl::InternalError("curl_easy_init failed");
  }
  CURL* curl = static_cast<CURL*>(handle_);
  curl_easy_reset(curl);
  std::unique_ptr<curl_slist, CurlSlistDeleter> headers;
  for (const std::string& h : request.headers) {
    curl_slist* appended = curl_slist_append(headers.get(), h.c_str());
    if (appended == nullptr) return absl::InternalError("curl_slist_append failed");
    headers.release();
    headers.reset(appended);
  }
  HttpResponse response;
  Transfer transfer{&response, request.max_response_bytes};
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(request.timeout)));  // NOLINT
  curl_easy_setopt(
      curl, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(absl::ToInt64Milliseconds(request.connect_timeout)));  // NOLINT
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  const CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) {
    const std::string reason =
        absl::StrCat(curl_easy_strerror(code), error[0] != '\0' ? absl::StrCat(": ", error) : "");
    if (transfer.too_large) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "POST ", request.url, ": response larger than ", request.max_response_bytes, " bytes"));
    }
    if (code == CURLE_OPERATION_TIMEDOUT) {
      return absl::DeadlineExceededError(
          absl::StrCat("POST ", request.url, ": no complete answer within ",
                       absl::FormatDuration(request.timeout), " (", reason, ")"));
    }
    return absl::UnavailableError(absl::StrCat("POST ", request.url, ": ", reason));
  }
  long status = 0;  // NOLINT(runtime/int)
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = status;
  return response;
}

}  // namespace mkb
