// Small, strict text helpers (no locale, no exceptions).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainfit/error.h"

namespace trainfit {

std::string trim(const std::string& text);
std::string_view trimmed(std::string_view text);  // trim without a copy
std::string lower(std::string text);
bool equals_lower(std::string_view text, std::string_view lower_word);  // ASCII, no copy
std::vector<std::string> split(const std::string& text, char separator);
// visit(part) for each separator-separated part of text, empty ones too, in order, as views
// (no copies); stops when visit returns false, and then returns false.
template <typename Visit>
bool for_each_part(std::string_view text, char separator, Visit visit) {
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(separator, start), text.size());
    if (!visit(text.substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}
bool parse_int(const std::string& text, int64_t* out);    // whole string, base 10
bool parse_number(const std::string& text, double* out);  // whole string, finite
bool parse_bool(const std::string& text, bool* out);      // true/false/1/0/yes/no/on/off
std::string format_fixed(double value, int decimals);     // printf's "%.Nf", N <= 6
std::string format_gib(double bytes);                     // "79.6"
Error unknown_field_error(const std::string& key);
// text for an error message: whole up to kMaxQuotedBytes, else its start, "...", and its
// size ("mmmm... (65516 bytes)"), so a huge value makes a short line.
std::string quoted_excerpt(const std::string& text);
// a file path for an error message: whole up to PATH_MAX (4096) bytes, which every path the
// system can open fits, so the user sees the file named; longer, as quoted_excerpt.
std::string quoted_path(const std::string& path);

}  // namespace trainfit
