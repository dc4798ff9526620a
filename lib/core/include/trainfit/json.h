// JSON faces of the request and the response.
#pragma once

#include <optional>
#include <string>

#include "trainfit/error.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit {

// The deepest nesting of arrays and objects in a JSON text (strings skipped), counted
// without recursion. nlohmann parses any depth but dump() recurses, and an error message
// shows a field's value: a value nested 100k deep would overflow a thread's stack, so
// texts deeper than kMaxJsonNesting are refused before parsing (a request is flat).
constexpr size_t kMaxJsonNesting = 64;
TRAINFIT_API size_t json_nesting_depth(const std::string& text);

// The members of every object in a JSON text (each ':' outside strings), counted in one
// pass. nlohmann's ordered_json, which keeps a file's key order, finds where to insert a
// member by a linear search of its object: 50,000 keys took 16 s. Texts read that way
// (DeepSpeed configs, the /v1/config body) are refused above kMaxJsonMembers first; a
// DeepSpeed config has about a hundred.
constexpr size_t kMaxJsonMembers = 1024;
TRAINFIT_API size_t json_member_count(const std::string& text);

// Parses a request object; malformed JSON reports its byte position,
// unknown fields list the known ones, wrong types name the field.
TRAINFIT_API Result<Request> request_from_json(const std::string& text);

// Request -> JSON object with the fields that are set (exact numbers): what a client
// sends to `trainfit serve`; request_from_json reads it back to the same request.
TRAINFIT_API std::string request_to_json(const Request& request);

struct ServingInfo {
  std::string serving_node;  // host that computed the response
  double compute_ms = 0;
};

TRAINFIT_API std::string response_to_json(const Response& response, const ServingInfo& serving,
                                          int indent = -1);
TRAINFIT_API std::string error_to_json(const Error& error);

// A service's answer (response_to_json's text) -> the Response the CLI renders, and
// its serving_node and compute_ms. Holds what the JSON holds: GiB figures to 4
// decimals, exact bytes for the peak and the capacity. Wrong shapes are kMalformed.
TRAINFIT_API Result<Response> response_from_json(const std::string& text, ServingInfo* serving = nullptr);

// A service's error body {"error":{"code","field","message"}} -> the Error; nullopt
// when the text is not that shape.
TRAINFIT_API std::optional<Error> error_from_json(const std::string& text);

}  // namespace trainfit
