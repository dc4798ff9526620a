// What the service answers: the API paths, the catalogs, health and metrics, and the
// HTTP errors, independent of how connections are handled (connection.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "metrics.h"
#include "trainfit/error.h"

namespace trainfit::cli {

// One request as read off the connection; the views live as long as the connection's parser.
struct HttpRequest {
  std::string_view method;
  std::string_view path;          // the target up to '?'
  std::string_view content_type;  // empty when the header is absent or empty
  std::string_view body;
  std::string_view query;         // the target after '?' ("" when none): GET /v1/plot.svg's fields
};

struct HttpReply {
  int status = 200;
  const char* content_type = "application/json";
  std::string body;
  const char* allow = nullptr;  // the Allow header of a 405
};

class Routes {
 public:
  Routes(std::string node_name, std::size_t max_body, int timeout_s, const Metrics& metrics);

  // Every request whose head and body were read in full.
  HttpReply handle(const HttpRequest& req) const;

  // Renders /v1/models, /v1/gpus and /v1/fields again from the catalogs now installed
  // (after a reload on SIGHUP); requests in flight keep the replies they started with.
  void refresh_catalogs();

  // The HTTP-level errors, found while reading (connection.cpp).
  HttpReply body_too_large() const;                                      // 413
  HttpReply timed_out(bool head_read, std::size_t received, std::string_view length) const;  // 408
  HttpReply malformed(std::string_view why) const;                      // 400
  HttpReply uri_too_long() const;                                        // 414
  HttpReply head_too_large(std::size_t limit) const;                     // 431

 private:
  HttpReply estimate(const HttpRequest& req) const;

  std::string node_name_;
  std::size_t max_body_;
  int timeout_s_;
  const Metrics& metrics_;
  struct CatalogReplies {
    std::string models, gpus, fields;
  };
  static std::shared_ptr<const CatalogReplies> render_catalogs();
  std::shared_ptr<const CatalogReplies> catalogs() const { return std::atomic_load(&catalogs_); }
  std::shared_ptr<const CatalogReplies> catalogs_;  // swapped whole by refresh_catalogs()
};

// The path as a metrics label: a known path, else "other", so that clients cannot grow
// the number of series.
const char* route_label(std::string_view path);

// The JSON error body for an HTTP-level error (not a request field's).
std::string http_error_json(const std::string& code, const std::string& field, const std::string& message);

// What every route answers with (routes.cpp, plot.cpp, page.cpp).
HttpReply make_reply(int status, std::string body, const char* type = "application/json");
// A request's error as POST /edge/training answers it: 400 naming the field, 500 for a bug.
HttpReply error_reply(const Error& error);
// 405, with the Allow header.
HttpReply not_allowed(const HttpRequest& req, const char* allow, const char* accepted);
// "application/json; charset=utf-8" -> true; so is "application/problem+json".
bool is_json_media_type(std::string_view header);
// 415 naming the Content-Type, for a body that is not JSON.
HttpReply not_json(const HttpRequest& req);

// Request targets longer than this are answered 414.
constexpr std::size_t kMaxTarget = 8192;

}  // namespace trainfit::cli
