// JSON -> Request. Types are checked per field; JSON errors carry the byte offset.
#include <optional>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "parse_errors.h"
#include "trainfit/util/text.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using nlohmann::json;

// A JSON number that is a whole number (8, 8.0, 5e8) as integer text; nothing for 8.5,
// NaN or beyond what a double holds exactly (2^53).
std::optional<std::string> whole_number_text(const json& value) {
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return std::to_string(static_cast<int64_t>(v));
  }
  return std::nullopt;
}

// The value as the text set_field_from_text takes; nothing when its JSON type is not the kind's.
std::optional<std::string> as_text(const json& value, FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt:
      if (value.is_number()) return whole_number_text(value);
      break;
    case FieldKind::kNumber:
      if (value.is_number()) return value.dump();
      break;
    case FieldKind::kBool:
      if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
      if (value.is_number_integer() && (value.get<int64_t>() == 0 || value.get<int64_t>() == 1)) {
        return value.get<int64_t>() == 1 ? "true" : "false";
      }
      break;
    case FieldKind::kString:
      if (value.is_string()) return value.get<std::string>();
      break;
    case FieldKind::kCount:
      if (value.is_string()) return value.get<std::string>();
      if (value.is_number()) return whole_number_text(value);
      break;
  }
  return std::nullopt;
}

const char* kind_name(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt: return "an integer";
    case FieldKind::kNumber: return "a number";
    case FieldKind::kBool: return "a boolean";
    case FieldKind::kString: return "a string";
    case FieldKind::kCount: return "a whole number or a string";
  }
  return "?";
}

// Calls visit(c) for every character of a JSON text outside its strings, in one pass.
template <typename Visit>
void for_each_outside_strings(const std::string& text, Visit visit) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else {
      visit(c);
    }
  }
}

}  // namespace

size_t json_nesting_depth(const std::string& text) {
  size_t depth = 0, deepest = 0;
  for_each_outside_strings(text, [&](char c) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  });
  return deepest;
}

size_t json_member_count(const std::string& text) {
  size_t members = 0;
  for_each_outside_strings(text, [&](char c) { members += c == ':'; });
  return members;
}

Result<Request> request_from_json(const std::string& text) {
  try {
    if (json_nesting_depth(text) > kMaxJsonNesting) {
      return make_error(ErrorCode::kMalformed, "",
                        "malformed JSON: nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
    }
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      return make_error(ErrorCode::kMalformed, "",
                        "malformed JSON at byte " + std::to_string(e.byte) + ": " + parse_error_reason(e));
    } catch (const json::out_of_range& e) {  // a number beyond a double's range: 1e999
      return make_error(ErrorCode::kMalformed, "", "malformed JSON: " + exception_message(e));
    }
    if (!doc.is_object()) {
      return make_error(ErrorCode::kMalformed, "", "the request must be a JSON object, got " +
                                                       std::string(doc.type_name()));
    }
    Request request;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const FieldSpec* spec = find_field(it.key());
      // JSON uses the field names only; CLI flags are not JSON keys.
      if (spec == nullptr || it.key() != spec->name) return unknown_field_error(it.key());
      if (it.value().is_null()) continue;  // null = not given
      const std::optional<std::string> value = as_text(it.value(), spec->kind);
      if (!value) {
        std::string shown = it.value().dump();
        if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
        return make_error(ErrorCode::kInvalidValue, spec->name,
                          std::string(spec->name) + "=" + shown + " is not valid; expected " + kind_name(spec->kind) +
                              " (" + spec->accepted + ")");
      }
      Result<bool> set = set_field_from_text(request, spec->name, *value);
      if (!set) return set.error();
    }
    return request;
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInternal, "", std::string("internal error: ") + e.what());
  }
}

}  // namespace trainfit
