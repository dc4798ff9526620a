#include "serve_routes.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "render.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"

namespace trainfit::cli {

namespace {

// The seed's endpoint and its aliases; all answer the same.
const char* const kEstimatePaths[] = {"/edge/training", "/edge/train", "/edge/finetune", "/edge/fsdp", "/edge/zero"};
const char* const kGetPaths[] = {"/healthz", "/metrics", "/v1/models", "/v1/gpus", "/v1/fields"};

template <std::size_t N>
bool one_of(const std::string& path, const char* const (&paths)[N]) {
  return std::any_of(std::begin(paths), std::end(paths), [&](const char* p) { return path == p; });
}

// "application/json; charset=utf-8" -> true; so is "application/problem+json".
bool is_json_media_type(std::string type) {
  type = type.substr(0, type.find(';'));
  type.erase(std::remove_if(type.begin(), type.end(), [](unsigned char c) { return std::isspace(c); }), type.end());
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string suffix = "+json";
  return type == "application/json" ||
         (type.rfind("application/", 0) == 0 && type.size() > suffix.size() &&
          type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0);
}

std::string capture(void (*print)(std::ostream&, bool)) {
  std::ostringstream out;
  print(out, true);
  return out.str();
}

// error_to_json, unless the message quotes bytes that are not UTF-8 (a request's own
// bytes, echoed back), which it refuses: then the same object with those bytes replaced.
std::string error_body(const Error& error) {
  try {
    return error_to_json(error) + "\n";
  } catch (const std::exception&) {
    return http_error_json(error_code_name(error.code), error.field, error.message);
  }
}

void reply(httplib::Response& res, int status, const std::string& body, const char* type = "application/json") {
  res.status = status;
  res.set_content(body, type);
}

}  // namespace

std::string route_label(const std::string& path) {
  return one_of(path, kEstimatePaths) || one_of(path, kGetPaths) ? path : "other";
}

std::string http_error_json(const std::string& code, const std::string& field, const std::string& message) {
  nlohmann::ordered_json j;
  j["error"] = {{"code", code}, {"field", field}, {"message", message}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Routes::Routes(std::string node_name, std::size_t max_body, int timeout_s, const Metrics& metrics)
    : node_name_(std::move(node_name)),
      max_body_(max_body),
      timeout_s_(timeout_s),
      metrics_(metrics),
      models_json_(capture(print_models)),
      gpus_json_(capture(print_gpus)),
      fields_json_(capture(print_fields)) {}

void Routes::handle(const httplib::Request& req, const std::string& body, httplib::Response& res) const {
  const std::string& path = req.path;
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (one_of(path, kEstimatePaths)) {
    if (req.method != "POST") {
      res.set_header("Allow", "POST");
      return reply(res, 405, http_error_json("method_not_allowed", "", req.method + " " + path + " is not allowed; accepted: POST"));
    }
    return estimate(req, body, res);
  }
  if (!one_of(path, kGetPaths)) {
    return reply(res, 404, http_error_json("not_found", "", "path '" + path + "' is not served; accepted: POST /edge/training "
                                           "(or /edge/train, /edge/finetune, /edge/fsdp, /edge/zero), GET /healthz, "
                                           "/metrics, /v1/models, /v1/gpus, /v1/fields"));
  }
  if (!get) {
    res.set_header("Allow", "GET, HEAD");
    return reply(res, 405, http_error_json("method_not_allowed", "", req.method + " " + path + " is not allowed; accepted: GET"));
  }
  if (path == "/healthz") return reply(res, 200, "ok\n", "text/plain");
  if (path == "/metrics") return reply(res, 200, metrics_.render(), "text/plain; version=0.0.4");
  if (path == "/v1/models") return reply(res, 200, models_json_);
  if (path == "/v1/gpus") return reply(res, 200, gpus_json_);
  return reply(res, 200, fields_json_);
}

// The CLI's `estimate --request FILE --format json`, byte for byte, with this node's name.
void Routes::estimate(const httplib::Request& req, const std::string& body, httplib::Response& res) const {
  if (req.has_header("Content-Type") && !is_json_media_type(req.get_header_value("Content-Type"))) {
    return reply(res, 415, http_error_json("unsupported_media_type", "Content-Type",
                                           "Content-Type='" + req.get_header_value("Content-Type") +
                                               "' is not accepted; accepted: application/json"));
  }
  Result<Request> request = request_from_json(body);
  if (!request) return reply(res, 400, error_body(request.error()));
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = respond(request.value(), ResponseOptions{});
  if (!response) {
    // An internal error is a bug in trainfit, not in the request.
    const int status = response.error().code == ErrorCode::kInternal ? 500 : 400;
    return reply(res, status, error_body(response.error()));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  reply(res, 200, response_to_json(response.value(), {node_name_, ms}, 2) + "\n");
}

void Routes::body_failed(const httplib::Request& req, bool too_large, std::size_t received, httplib::Response& res) const {
  if (too_large) {
    return reply(res, 413, http_error_json("payload_too_large", "", "the request body is over the limit; accepted: at most " +
                                                                        std::to_string(max_body_) + " bytes"));
  }
  const std::string length = req.get_header_value("Content-Length");
  return reply(res, 408, http_error_json("timeout", "", "the request body stopped after " + std::to_string(received) + " of " +
                                                         (length.empty() ? "its" : length) + " bytes; accepted: the whole body "
                                                         "with no silence over " + std::to_string(timeout_s_) + " s"));
}

void Routes::fill_error_body(const httplib::Request& req, httplib::Response& res) const {
  if (!res.body.empty()) return;  // ours, already explained
  switch (res.status) {
    case 413:
      return reply(res, 413, http_error_json("payload_too_large", "", "the request body is over the limit; accepted: at most " +
                                                                   std::to_string(max_body_) + " bytes"));
    case 414:
      return reply(res, 414, http_error_json("uri_too_long", "", "the request URI is over 8192 bytes"));
    case 400:
      return reply(res, 400, http_error_json("malformed", "", "malformed HTTP request (method '" + req.method + "')"));
    default:
      return reply(res, res.status, http_error_json("http_" + std::to_string(res.status), "", "the request cannot be served"));
  }
}

}  // namespace trainfit::cli
