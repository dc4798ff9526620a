#include "trainfit/util/text.h"
#include "trainfit/util/counted.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>


namespace trainfit {

std::string quoted_excerpt(const std::string& text) {
  if (text.size() <= kMaxQuotedBytes) return text;
  return text.substr(0, kMaxQuotedBytes) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string quoted_path(const std::string& path) {
  constexpr size_t kPathMax = 4096;  // Linux PATH_MAX, <linux/limits.h>
  if (path.size() <= kPathMax) return path;
  return path.substr(0, kMaxQuotedBytes) + "... (" + std::to_string(path.size()) + " bytes)";
}

std::string_view trimmed(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::string trim(const std::string& text) { return std::string(trimmed(text)); }

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool equals_lower(std::string_view text, std::string_view lower_word) {
  if (text.size() != lower_word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower_word[i]) return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *out = static_cast<int64_t>(value);
  return true;
}

bool parse_number(const std::string& text, double* out) {
  if (text.empty() || text.size() > 64) return false;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

bool parse_bool(const std::string& text, bool* out) {
  const std::string t = lower(text);
  if (t == "true" || t == "1" || t == "yes" || t == "on") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "no" || t == "off") {
    *out = false;
    return true;
  }
  return false;
}

std::string counted(int64_t n, const std::string& singular, const std::string& plural) {
  const std::string noun = n == 1 ? singular : plural.empty() ? singular + "s" : plural;
  return std::to_string(n) + " " + noun;
}

std::string format_fixed(double value, int decimals) {
  // std::to_chars prints what printf's "%.Nf" prints (C++17 [charconv.to.chars]), without
  // printf's locale and format parsing: a refusal formats several numbers in slurmctld.
  char buffer[320];  // DBL_MAX in fixed notation is 309 digits, then the sign, point and decimals
  const std::to_chars_result end =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, std::min(decimals, 6));
  return end.ec == std::errc() ? std::string(buffer, end.ptr) : std::string("?");
}

std::string format_gib(double bytes) { return format_fixed(bytes / (1024.0 * 1024.0 * 1024.0), 1); }

}  // namespace trainfit
