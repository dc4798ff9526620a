// GET and POST /v1/plot.svg (docs/charts.md): the charts of one request as SVG. GET takes
// the request's JSON field names as query parameters, POST the same JSON body as POST
// /edge/training; ?chart=gpus|seq|budget|all (default all) picks the charts.
#pragma once

#include <optional>

#include "routes.h"

namespace trainfit::cli {

constexpr const char* kPlotPath = "/v1/plot.svg";

// The answer for /v1/plot.svg; nullopt for any other path.
std::optional<HttpReply> plot_reply(const HttpRequest& req);

}  // namespace trainfit::cli
