// `trainfit report`: audit log files as bounded lines. Rotated files may be gzip
// (told by the magic bytes, never by the name); a line longer than the cap is skipped
// without being held in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "trainfit/error.h"

namespace trainfit::cli::report {

constexpr size_t kMaxLineBytes = size_t{1} << 20;  // an audit line is a few KiB at most

struct LineSink {
  std::function<void(int64_t line_number, const std::string& text)> line;  // without the '\n'
  std::function<void(int64_t line_number)> oversize;                       // longer than the cap
};

struct ReadEnd {
  std::string damage;  // "" when the whole file was read; else why not (damaged gzip data:
                       // the lines before the damage have been delivered)
};
// Reads `path` line by line; an error (field: the path) when it is not a regular file or
// cannot be opened.
Result<ReadEnd> for_each_line(const std::string& path, size_t max_line, const LineSink& sink);

}  // namespace trainfit::cli::report
