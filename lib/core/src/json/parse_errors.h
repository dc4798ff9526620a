// nlohmann/json's exceptions as one clause of a trainfit message. Their what() is
// "[json.exception.NAME.ID] MESSAGE" and a parse error's MESSAGE is "parse error at line L,
// column C: REASON" (nlohmann/json 3.x, include/nlohmann/detail/exceptions.hpp,
// exception::name and parse_error::create). trainfit says where in its own words (the byte
// from e.byte, or FILE:LINE), so only REASON is kept.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainfit {

// MESSAGE without the "[json.exception.NAME.ID] " that every exception starts with.
inline std::string exception_message(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t end = what.rfind("] ", what.find(' ') == std::string::npos ? what.size() : what.find(' '));
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what;
}

// REASON of a parse error: the part after its position ("... column C: ").
inline std::string parse_error_reason(const nlohmann::json::parse_error& e) {
  const std::string message = exception_message(e);
  const size_t position_end = message.rfind("parse error", 0) == 0 ? message.find(": ") : std::string::npos;
  return position_end == std::string::npos ? message : message.substr(position_end + 2);
}

}  // namespace trainfit
