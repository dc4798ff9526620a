// trainfit_remote: asks a `trainfit serve` pool (POST /edge/training) instead of computing
// locally: `trainfit estimate --endpoint` and the SPANK plugin's endpoint=. libcurl, TLS
// always verified, endpoints tried in order, every transfer bounded in time and size.
// Never linked into job_submit (slurmctld computes in-process; tests/slurm/symbols_test.sh).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/error.h"

namespace trainfit::remote {

constexpr long kDefaultConnectTimeoutMs = 500;
constexpr long kDefaultTimeoutMs = 1500;   // the whole transfer, connect included
constexpr long kMaxTimeoutMs = 60000;
constexpr size_t kMaxAnswerBytes = 4 << 20;  // a response is ~20 KiB; more is not trainfit's
constexpr size_t kMaxShownTextBytes = 1024;   // an endpoint's text on a terminal: a 400's message is ~200 bytes

enum class Fallback { kLocal, kRefuse };  // when no endpoint answers

struct Settings {
  std::vector<std::string> endpoints;  // full URLs of the estimate path, in the order tried
  long connect_timeout_ms = kDefaultConnectTimeoutMs;
  long timeout_ms = kDefaultTimeoutMs;  // per endpoint
  std::string cacert;                   // CA bundle to verify against; "" = the system's
  Fallback fallback = Fallback::kLocal;
};

// Each parser names the option as the caller spells it ("--endpoint", "endpoint") in
// its one-line error: the option, the value, and what is accepted.
// "http://a:8080,https://b" -> URLs; a URL without a path gets /edge/training.
Result<std::vector<std::string>> parse_endpoints(const std::string& list, const std::string& option);
Result<long> parse_timeout_ms(const std::string& text, const std::string& option);
Result<Fallback> parse_fallback(const std::string& text, const std::string& option);
const char* to_string(Fallback fallback);

// The client's options as given (nullopt: not given), and each one's name as the caller
// spells it: the CLI's --endpoint, --timeout-ms..., the plugstack words endpoint=,
// endpoint_timeout_ms=... One parser, so both faces check and word errors alike.
struct SettingsWords {
  std::optional<std::string> endpoint, connect_timeout_ms, timeout_ms, cacert, fallback;
};
struct SettingsNames {
  const char *connect_timeout_ms, *timeout_ms, *fallback;
  const char* missing;  // the error when an option comes without the endpoint
};
// nullopt when neither the endpoint nor any option is given.
Result<std::optional<Settings>> parse_settings(const SettingsWords& given, const SettingsNames& names);

// An endpoint that did not answer, and why ("connection refused", "timed out ...",
// "certificate not verified: ...", "HTTP 503").
struct Failure {
  std::string endpoint;
  std::string why;
};

// An answer: 200 with a response, or 400 with the request's error (the request's own
// answer: not retried elsewhere).
struct Answer {
  std::string endpoint;
  long status = 0;
  std::string body;
};

struct Outcome {
  std::optional<Answer> answer;   // empty when every endpoint failed
  std::vector<Failure> failures;  // in the order tried
};

// Whether an answer is trainfit's: a 200 that is a trainfit response or a 400 that is a
// trainfit error. Anything else (another server at that URL) is kUnavailable, saying why:
// that endpoint then counts as failed.
Result<bool> is_trainfit_answer(const Answer& answer);

// POSTs the request JSON to each endpoint in turn until one gives a trainfit answer (200 or
// 400, is_trainfit_answer); a connection failure, a timeout, a TLS failure, an over-long
// body or any other answer moves on to the next.
Outcome post_estimate(const Settings& settings, const std::string& request_json);

// A 400 answer's error (a trainfit error, is_trainfit_answer), its message as shown_text.
Error answer_error(const Answer& answer);

// Text an endpoint sent, as one bounded line for a terminal: control characters (line
// breaks included) as spaces, and past kMaxShownTextBytes cut at a character boundary with
// "... [cut: N bytes]".
std::string shown_text(const std::string& text);

// "http://a:1 (connection refused), https://b (timed out after 500 ms)"
std::string describe(const std::vector<Failure>& failures);

}  // namespace trainfit::remote
