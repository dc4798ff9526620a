// Helpers shared by the fuzz targets: the input as text, and splitting it into parts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainfit::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Splits on `separator`, keeping empty parts: how a harness turns one input into a list
// (argv, environment entries, files).
inline std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos; at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace trainfit::fuzz
