// libcurl behind trainfit_remote (client.h). One easy handle per attempt: attempts are few
// and short, and a fresh handle carries no state from a failed endpoint to the next.
#include "trainfit/remote/client.h"

#include "curl_api.h"
#include "trainfit/json.h"
#include "trainfit/util/text.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <mutex>

namespace trainfit::remote {
namespace {

constexpr const char* kEstimatePath = "/edge/training";

// libcurl, loaded at the first use (curl_api.h).
// Only after post_estimate saw curl_api() succeed.
const CurlApi& curl() { return *curl_api().value(); }

Error invalid(const std::string& option, const std::string& value, const std::string& accepted) {
  return make_error(ErrorCode::kInvalidValue, option, option + "='" + value + "' is not valid; accepted: " + accepted);
}

bool has_http_scheme(const std::string& url) {
  std::string head = url.substr(0, 8);
  std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
  return head.rfind("http://", 0) == 0 || head.rfind("https://", 0) == 0;
}

// The URL libcurl will use, or "" when it is not an http(s) URL with a host.
std::string estimate_url(const std::string& url) {
  if (!has_http_scheme(url) || !curl_api()) return "";
  std::unique_ptr<CURLU, void (*)(CURLU*)> parsed(curl().url(), curl().url_cleanup);
  if (!parsed || curl().url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  char* host = nullptr;
  const bool has_host = curl().url_get(parsed.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK && host != nullptr && *host;
  curl().free(host);
  if (!has_host) return "";
  char* path = nullptr;
  curl().url_get(parsed.get(), CURLUPART_PATH, &path, 0);
  const bool bare = path == nullptr || std::string(path) == "/" || std::string(path).empty();
  curl().free(path);
  if (bare) curl().url_set(parsed.get(), CURLUPART_PATH, kEstimatePath, 0);
  char* full = nullptr;
  if (curl().url_get(parsed.get(), CURLUPART_URL, &full, 0) != CURLUE_OK || full == nullptr) return "";
  std::string out = full;
  curl().free(full);
  return out;
}

struct Body {
  std::string text;
  bool too_long = false;
};

// Returning less than given aborts the transfer (CURLE_WRITE_ERROR): the size cap.
size_t append_capped(char* data, size_t size, size_t count, void* user) {
  Body* body = static_cast<Body*>(user);
  const size_t bytes = size * count;
  if (body->text.size() + bytes > kMaxAnswerBytes) {
    body->too_long = true;
    return 0;
  }
  body->text.append(data, bytes);
  return bytes;
}

void set_options(CURL* handle, const Settings& s, const std::string& url, const std::string& json, curl_slist* headers,
                 Body* body, char* error_text) {
  curl().easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl().easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl().easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl().easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM in sbatch/srun or a threaded CLI
  curl().easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, s.connect_timeout_ms);
  curl().easy_setopt(handle, CURLOPT_TIMEOUT_MS, s.timeout_ms);
  curl().easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 1L);  // always: no option turns it off
  curl().easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!s.cacert.empty()) curl().easy_setopt(handle, CURLOPT_CAINFO, s.cacert.c_str());
  curl().easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  curl().easy_setopt(handle, CURLOPT_POSTFIELDS, json.c_str());
  curl().easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(json.size()));
  curl().easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxAnswerBytes));
  curl().easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_capped);
  curl().easy_setopt(handle, CURLOPT_WRITEDATA, body);
  curl().easy_setopt(handle, CURLOPT_ERRORBUFFER, error_text);
}

std::string why_failed(CURLcode code, const Body& body, const char* error_text) {
  const std::string detail = error_text[0] != '\0' ? error_text : curl().easy_strerror(code);
  if (body.too_long || code == CURLE_FILESIZE_EXCEEDED) {
    return "answer over " + std::to_string(kMaxAnswerBytes) + " bytes, transfer aborted";
  }
  if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE) {
    return "certificate not verified: " + detail;
  }
  if (code == CURLE_COULDNT_CONNECT) return "connection failed: " + detail;
  if (code == CURLE_OPERATION_TIMEDOUT) return "timed out: " + detail;
  return detail;
}

Error endpoint_failed(const std::string& why) { return make_error(ErrorCode::kUnavailable, "endpoint", why); }

// One endpoint: an Answer, or why there is none.
Result<Answer> post_once(const Settings& s, const std::string& url, const std::string& json) {
  std::unique_ptr<CURL, void (*)(CURL*)> handle(curl().easy_init(), curl().easy_cleanup);
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(
      curl().slist_append(nullptr, "Content-Type: application/json"), curl().slist_free_all);
  if (!handle || !headers) return endpoint_failed("libcurl could not start a transfer");
  Body body;
  char error_text[CURL_ERROR_SIZE] = {0};
  set_options(handle.get(), s, url, json, headers.get(), &body, error_text);
  const CURLcode code = curl().easy_perform(handle.get());
  if (code != CURLE_OK) return endpoint_failed(why_failed(code, body, error_text));
  long status = 0;
  curl().easy_getinfo(handle.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200 && status != 400) return endpoint_failed("HTTP " + std::to_string(status));
  return Answer{url, status, std::move(body.text)};
}

}  // namespace

Result<std::vector<std::string>> parse_endpoints(const std::string& list, const std::string& option) {
  const char* accepted = "one or more http:// or https:// URLs, comma-separated";
  std::vector<std::string> urls;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string url = trim(list.substr(start, comma - start));
    const std::string full = url.empty() ? "" : estimate_url(url);
    if (full.empty()) return invalid(option, list == url ? list : url, accepted);
    urls.push_back(full);
    start = comma + 1;
  }
  return urls;
}

Result<long> parse_timeout_ms(const std::string& text, const std::string& option) {
  const std::string accepted = "integer milliseconds from 1 to " + std::to_string(kMaxTimeoutMs);
  if (text.empty() || text.size() > 6 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return invalid(option, text, accepted);
  }
  const long ms = std::stol(text);
  if (ms < 1 || ms > kMaxTimeoutMs) return invalid(option, text, accepted);
  return ms;
}

Result<Fallback> parse_fallback(const std::string& text, const std::string& option) {
  if (text == "local") return Fallback::kLocal;
  if (text == "refuse") return Fallback::kRefuse;
  return invalid(option, text, "local|refuse");
}

const char* to_string(Fallback fallback) { return fallback == Fallback::kLocal ? "local" : "refuse"; }

Result<std::optional<Settings>> parse_settings(const SettingsWords& given, const SettingsNames& names) {
  if (!given.endpoint) {
    if (given.connect_timeout_ms || given.timeout_ms || given.cacert || given.fallback) {
      return make_error(ErrorCode::kMissing, "endpoint", names.missing);
    }
    return std::optional<Settings>();
  }
  Settings s;
  auto endpoints = parse_endpoints(*given.endpoint, "endpoint");
  if (!endpoints) return endpoints.error();
  s.endpoints = endpoints.value();
  for (auto [text, option, slot] : {std::make_tuple(&given.connect_timeout_ms, names.connect_timeout_ms, &s.connect_timeout_ms),
                                    std::make_tuple(&given.timeout_ms, names.timeout_ms, &s.timeout_ms)}) {
    if (!*text) continue;
    Result<long> ms = parse_timeout_ms(**text, option);
    if (!ms) return ms.error();
    *slot = ms.value();
  }
  if (given.cacert) {
    if (given.cacert->empty() || !std::ifstream(*given.cacert)) {
      return invalid("cacert", *given.cacert, "a readable PEM file of CA certificates");
    }
    s.cacert = *given.cacert;
  }
  if (given.fallback) {
    Result<Fallback> fallback = parse_fallback(*given.fallback, names.fallback);
    if (!fallback) return fallback.error();
    s.fallback = fallback.value();
  }
  return std::optional<Settings>(s);
}

Result<bool> is_trainfit_answer(const Answer& answer) {
  if (answer.status == 400) {
    if (error_from_json(answer.body)) return true;
    return endpoint_failed("HTTP 400 that is not a trainfit error");
  }
  Result<Response> read = response_from_json(answer.body);
  if (!read) return endpoint_failed(read.error().message);
  return true;
}

Outcome post_estimate(const Settings& settings, const std::string& request_json) {
  Outcome outcome;
  for (const std::string& url : settings.endpoints) {
    Result<const CurlApi*> api = curl_api();
    Result<Answer> answer = api ? post_once(settings, url, request_json) : api.error();
    if (answer) {
      Result<bool> usable = is_trainfit_answer(answer.value());
      if (!usable) answer = usable.error();
    }
    if (answer) {
      outcome.answer = std::move(answer).value();
      break;
    }
    outcome.failures.push_back({url, shown_text(answer.error().message)});
  }
  return outcome;
}

Error answer_error(const Answer& answer) {
  std::optional<Error> error = error_from_json(answer.body);
  if (!error) return endpoint_failed("HTTP " + std::to_string(answer.status) + " that is not a trainfit error");
  error->message = shown_text(error->message);
  return *error;
}

std::string shown_text(const std::string& text) {
  size_t end = std::min(text.size(), kMaxShownTextBytes);
  if (end < text.size()) {
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // not inside a UTF-8 character
  }
  std::string out = text.substr(0, end);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') c = ' ';
  }
  if (end < text.size()) out += "... [cut: " + std::to_string(text.size()) + " bytes]";
  return out;
}

std::string describe(const std::vector<Failure>& failures) {
  std::string out;
  for (const Failure& f : failures) out += (out.empty() ? "" : ", ") + f.endpoint + " (" + f.why + ")";
  return out;
}

}  // namespace trainfit::remote
