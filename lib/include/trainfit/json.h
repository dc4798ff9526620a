// JSON faces of the request and the response.
#pragma once

#include <string>

#include "trainfit/error.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit {

// Parses a request object; malformed JSON reports its byte position,
// unknown fields list the known ones, wrong types name the field.
TRAINFIT_API Result<Request> request_from_json(const std::string& text);

struct ServingInfo {
  std::string serving_node;  // host that computed the response
  double compute_ms = 0;
};

TRAINFIT_API std::string response_to_json(const Response& response, const ServingInfo& serving,
                                          int indent = -1);
TRAINFIT_API std::string error_to_json(const Error& error);

}  // namespace trainfit
