// What the service answers: the API paths, the catalogs, health and metrics, and the
// HTTP errors, independent of how connections are handled (serve_main.cpp).
#pragma once

#include <httplib.h>

#include <string>

#include "serve_metrics.h"

namespace trainfit::cli {

class Routes {
 public:
  Routes(std::string node_name, std::size_t max_body, int timeout_s, const Metrics& metrics);

  // Every request with a readable head comes here, with its whole body.
  void handle(const httplib::Request& req, const std::string& body, httplib::Response& res) const;
  // A body that could not be read: over --max-body (413) or stopped short (408).
  void body_failed(const httplib::Request& req, bool too_large, std::size_t received, httplib::Response& res) const;
  // Gives the errors httplib answers itself (414, malformed requests) a JSON body.
  void fill_error_body(const httplib::Request& req, httplib::Response& res) const;

 private:
  void estimate(const httplib::Request& req, const std::string& body, httplib::Response& res) const;

  std::string node_name_;
  std::size_t max_body_;
  int timeout_s_;
  const Metrics& metrics_;
  std::string models_json_, gpus_json_, fields_json_;  // fixed for the process's life
};

// The path as a metrics label: a known path, else "other", so that clients cannot grow
// the number of series.
std::string route_label(const std::string& path);

// The JSON error body for an HTTP-level error (not a request field's).
std::string http_error_json(const std::string& code, const std::string& field, const std::string& message);

}  // namespace trainfit::cli
