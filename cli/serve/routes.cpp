#include "routes.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "render.h"
#include "page.h"
#include "plot.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"

namespace trainfit::cli {

namespace {

// The seed's endpoint and its aliases; all answer the same.
const char* const kEstimatePaths[] = {"/edge/training", "/edge/train", "/edge/finetune", "/edge/fsdp", "/edge/zero"};
const char* const kGetPaths[] = {"/healthz", "/metrics", "/v1/models", "/v1/gpus", "/v1/fields"};

template <std::size_t N>
bool one_of(std::string_view path, const char* const (&paths)[N]) {
  return std::any_of(std::begin(paths), std::end(paths), [&](const char* p) { return path == p; });
}

std::string capture(void (*print)(std::ostream&, bool)) {
  std::ostringstream out;
  print(out, true);
  return out.str();
}

}  // namespace

const char* route_label(std::string_view path) {
  for (const char* p : kEstimatePaths) {
    if (path == p) return p;
  }
  for (const char* p : kGetPaths) {
    if (path == p) return p;
  }
  if (path == kPlotPath) return kPlotPath;
  if (const char* p = page_route_label(path)) return p;  // the page, its assets, /v1/config
  return "other";
}

std::string http_error_json(const std::string& code, const std::string& field, const std::string& message) {
  nlohmann::ordered_json j;
  j["error"] = {{"code", code}, {"field", field}, {"message", message}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

HttpReply make_reply(int status, std::string body, const char* type) {
  HttpReply r;
  r.status = status;
  r.content_type = type;
  r.body = std::move(body);
  return r;
}

// error_to_json, unless the message quotes bytes that are not UTF-8 (a request's own
// bytes, echoed back), which it refuses: then the same object with those bytes replaced.
HttpReply error_reply(const Error& error) {
  const int status = error.code == ErrorCode::kInternal ? 500 : 400;  // internal: a bug in trainfit
  try {
    return make_reply(status, error_to_json(error) + "\n");
  } catch (const std::exception&) {
    return make_reply(status, http_error_json(error_code_name(error.code), error.field, error.message));
  }
}

HttpReply not_allowed(const HttpRequest& req, const char* allow, const char* accepted) {
  HttpReply r = make_reply(405, http_error_json("method_not_allowed", "", std::string(req.method) + " " +
                                                                          std::string(req.path) + " is not allowed; accepted: " + accepted));
  r.allow = allow;
  return r;
}

// JSON's types, and curl -d's default (application/x-www-form-urlencoded), which `curl -d '{...}'`
// sends with a JSON body: the body is read as JSON all the same (a form's key=value text is then
// a 400 naming what is wrong). The answers change nothing on the server, so a form posted from
// another site gains nothing.
bool is_json_media_type(std::string_view header) {
  std::string type(header.substr(0, header.find(';')));
  type.erase(std::remove_if(type.begin(), type.end(), [](unsigned char c) { return std::isspace(c); }), type.end());
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string suffix = "+json";
  return type == "application/json" || type == "application/x-www-form-urlencoded" ||
         (type.rfind("application/", 0) == 0 && type.size() > suffix.size() &&
          type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0);
}

HttpReply not_json(const HttpRequest& req) {
  return make_reply(415, http_error_json("unsupported_media_type", "Content-Type",
                                         "Content-Type='" + std::string(req.content_type) +
                                             "' is not accepted; accepted: application/json (or curl -d's application/x-www-form-urlencoded with a JSON body)"));
}

Routes::Routes(std::string node_name, std::size_t max_body, int timeout_s, const Metrics& metrics)
    : node_name_(std::move(node_name)),
      max_body_(max_body),
      timeout_s_(timeout_s),
      metrics_(metrics),
      catalogs_(render_catalogs()) {}

std::shared_ptr<const Routes::CatalogReplies> Routes::render_catalogs() {
  return std::make_shared<const CatalogReplies>(
      CatalogReplies{capture(print_models), capture(print_gpus), capture(print_fields)});
}

void Routes::refresh_catalogs() { std::atomic_store(&catalogs_, render_catalogs()); }

HttpReply Routes::handle(const HttpRequest& req) const {
  const std::string_view path = req.path;
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (std::optional<HttpReply> page = page_reply(req)) return std::move(*page);  // page.cpp
  if (std::optional<HttpReply> plot = plot_reply(req)) return std::move(*plot);  // plot.cpp
  if (one_of(path, kEstimatePaths)) {
    if (req.method != "POST") return not_allowed(req, "POST", "POST");
    return estimate(req);
  }
  if (!one_of(path, kGetPaths)) {
    return make_reply(404, http_error_json("not_found", "", "path '" + std::string(path) + "' is not served; accepted: POST "
                                      "/edge/training (or /edge/train, /edge/finetune, /edge/fsdp, /edge/zero), GET "
                                      "/healthz, /metrics, /v1/models, /v1/gpus, /v1/fields, GET or POST /v1/plot.svg"));
  }
  if (!get) return not_allowed(req, "GET, HEAD", "GET");
  if (path == "/healthz") return make_reply(200, "ok\n", "text/plain");
  if (path == "/metrics") return make_reply(200, metrics_.render(), "text/plain; version=0.0.4");
  const std::shared_ptr<const CatalogReplies> catalogs = this->catalogs();
  if (path == "/v1/models") return make_reply(200, catalogs->models);
  if (path == "/v1/gpus") return make_reply(200, catalogs->gpus);
  return make_reply(200, catalogs->fields);
}

// The CLI's `estimate --request FILE --format json`, written compact (a third fewer bytes to
// send and for the client to read), with this node's name.
HttpReply Routes::estimate(const HttpRequest& req) const {
  if (!req.content_type.empty() && !is_json_media_type(req.content_type)) return not_json(req);
  Result<Request> request = request_from_json(std::string(req.body));
  if (!request) return error_reply(request.error());
  const auto start = std::chrono::steady_clock::now();
  Result<Response> response = respond(request.value(), ResponseOptions{});
  if (!response) return error_reply(response.error());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string body = response_to_json(response.value(), {node_name_, ms});
  body += '\n';
  return make_reply(200, std::move(body));
}

HttpReply Routes::body_too_large() const {
  return make_reply(413, http_error_json("payload_too_large", "", "the request body is over the limit; accepted: at most " +
                                                                 std::to_string(max_body_) + " bytes"));
}

HttpReply Routes::timed_out(bool head_read, std::size_t received, std::string_view length) const {
  const std::string what = head_read ? "the request body stopped after " + std::to_string(received) + " of " +
                                           (length.empty() ? std::string("its") : std::string(length)) + " bytes"
                                     : std::string("the request's line and headers did not arrive in full");
  return make_reply(408, http_error_json("timeout", "", what + "; accepted: the whole request within " +
                                                   std::to_string(timeout_s_) + " s of its first byte"));
}

HttpReply Routes::malformed(std::string_view why) const {
  return make_reply(400, http_error_json("malformed", "", "malformed HTTP request: " + std::string(why)));
}

HttpReply Routes::uri_too_long() const {
  return make_reply(414, http_error_json("uri_too_long", "", "the request URI is over " + std::to_string(kMaxTarget) + " bytes"));
}

HttpReply Routes::head_too_large(std::size_t limit) const {
  return make_reply(431, http_error_json("header_too_large", "", "the request line and headers are over " +
                                                               std::to_string(limit) + " bytes"));
}

}  // namespace trainfit::cli
