#include "plot.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/estimate.h"
#include "trainfit/json.h"
#include "trainfit/plot.h"
#include "trainfit/request.h"

namespace trainfit::cli {
namespace {



int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
Result<std::string> url_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      const int hi = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1, lo = hi >= 0 ? hex_digit(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return make_error(ErrorCode::kMalformed, "", "malformed query: '" + std::string(text) + "' has a bad %-escape");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

using Query = std::vector<std::pair<std::string, std::string>>;

Result<Query> parse_query(std::string_view query) {
  Query out;
  size_t start = 0;
  while (start < query.size()) {
    const size_t end = std::min(query.find('&', start), query.size());
    const std::string_view item = query.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    Result<std::string> key = url_decode(item.substr(0, eq));
    Result<std::string> value = url_decode(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    if (!key) return key.error();
    if (!value) return value.error();
    out.emplace_back(key.value(), value.value());
  }
  return out;
}

// A query value as the JSON the request field takes: numbers and booleans typed per the
// field table; anything that does not parse stays a string, so that request_from_json
// names the field and what it accepts, exactly as for a POSTed body.
nlohmann::json typed(const FieldSpec& field, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  switch (field.kind) {
    case FieldKind::kInt: {
      errno = 0;
      const long long v = std::strtoll(begin, &end, 10);
      if (!text.empty() && *end == '\0' && errno == 0 && !std::isspace(static_cast<unsigned char>(text[0]))) return v;
      break;
    }
    case FieldKind::kNumber: {
      const double v = std::strtod(begin, &end);
      if (!text.empty() && *end == '\0' && std::isfinite(v) && !std::isspace(static_cast<unsigned char>(text[0]))) return v;
      break;
    }
    case FieldKind::kBool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      break;
    case FieldKind::kString:
    case FieldKind::kCount:  // a string either way: request_from_json takes "5e8" and "auto"
      break;
  }
  return text;
}

// The query's fields as the request's JSON object; chart= is picked out.
Result<std::string> request_json(const Query& query, std::string* chart) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : query) {
    if (key == "chart") {
      *chart = value;
      continue;
    }
    const FieldSpec* field = find_field(key);
    object[key] = field != nullptr && key == field->name ? typed(*field, value) : nlohmann::json(value);
  }
  try {
    return object.dump();
  } catch (const std::exception&) {  // bytes that are not UTF-8
    return make_error(ErrorCode::kMalformed, "", "malformed query: a parameter is not UTF-8 text");
  }
}


}  // namespace

std::optional<HttpReply> plot_reply(const HttpRequest& req) {
  if (req.path != kPlotPath) return std::nullopt;
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (!get && req.method != "POST") {
    return not_allowed(req, "GET, HEAD, POST", "GET, POST");
  }
  Result<Query> query = parse_query(req.query);
  if (!query) return error_reply(query.error());
  std::string chart = "all";
  Result<std::string> fields = request_json(query.value(), &chart);
  if (!fields) return error_reply(fields.error());
  std::string body = fields.value();
  if (!get) {
    if (!req.content_type.empty() && !is_json_media_type(req.content_type)) return not_json(req);
    if (fields.value() != "{}") {
      return make_reply(400, http_error_json("invalid_value", "", "POST /v1/plot.svg takes the request as its JSON body; "
                                                             "accepted query parameters: chart"));
    }
    body = std::string(req.body);
  }
  Result<std::vector<plot::Chart>> charts = plot::parse_charts(chart);
  if (!charts) return error_reply(charts.error());
  Result<Request> request = request_from_json(body);
  if (!request) return error_reply(request.error());
  ResponseOptions options;
  options.advice = false;
  Result<Response> response = respond(request.value(), options);
  if (!response) return error_reply(response.error());
  return make_reply(200, plot::response_svg(response.value(), charts.value()), "image/svg+xml");
}

}  // namespace trainfit::cli
