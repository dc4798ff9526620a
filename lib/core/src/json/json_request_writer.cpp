// Request -> JSON: the fields that are set, with exact values (a client's request body).
#include "json_writer.h"
#include "trainfit/json.h"

namespace trainfit {

std::string request_to_json(const Request& request) {
  JsonWriter w;
  w.begin_object();
  for (const auto& [name, value] : set_fields(request)) {
    w.key(name);
    if (const auto* i = std::get_if<int64_t>(&value)) w.integer(*i);
    else if (const auto* d = std::get_if<double>(&value)) w.number(*d);
    else if (const auto* b = std::get_if<bool>(&value)) w.boolean(*b);
    else w.string(std::get<std::string>(value));
  }
  w.end_object();
  return w.take();
}

}  // namespace trainfit
