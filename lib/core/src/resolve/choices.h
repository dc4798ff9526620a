// Helpers shared by the resolve steps: range-checked integers, named choices, and
// the one-line error that names the field, the value and what is accepted.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/util/text.h"
#include "trainfit/catalog.h"
#include "trainfit/error.h"

namespace trainfit::resolving {

// Sane upper bounds: beyond them a request is a typo, not a training job.
constexpr int64_t kMaxGpus = int64_t{1} << 20;
constexpr int64_t kMaxSeq = int64_t{1} << 24;
constexpr int64_t kMaxDim = int64_t{1} << 20;

inline Error invalid(const std::string& field, const std::string& value, const std::string& accepted) {
  return make_error(ErrorCode::kInvalidValue, field, field + "=" + value + " is not valid; accepted: " + accepted);
}

inline std::string num(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// Checks an optional integer against [lo, hi]; copies it into *out when set.
inline bool take_int(const std::optional<int64_t>& value, const char* field, int64_t lo, int64_t hi, int64_t* out,
                     Error* error) {
  if (!value) return true;
  if (*value < lo || *value > hi) {
    *error = invalid(field, std::to_string(*value), "integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return false;
  }
  *out = *value;
  return true;
}

template <typename Enum>
struct Choice {
  const char* name;
  Enum value;
};

template <typename Enum, size_t N>
bool take_enum(const std::optional<std::string>& value, const char* field, const Choice<Enum> (&choices)[N], Enum* out,
               Error* error) {
  if (!value) return true;
  const std::string wanted = lower(*value);
  std::string accepted;
  std::vector<std::string> names;
  for (const auto& choice : choices) {
    if (wanted == choice.name) {
      *out = choice.value;
      return true;
    }
    accepted += accepted.empty() ? "" : "|";
    accepted += choice.name;
    names.push_back(choice.name);
  }
  const std::string hint = did_you_mean(wanted, names);
  *error = invalid(field, "'" + *value + "'", accepted + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  return false;
}

}  // namespace trainfit::resolving
