// The access log: one JSON object per line, written whole under a lock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace trainfit::cli {

struct AccessEntry {
  std::string remote;  // "ADDR:PORT"
  std::string method;
  std::string path;
  int status = 0;
  std::size_t bytes = 0;  // response body bytes
  std::int64_t duration_us = 0;
};

class AccessLog {
 public:
  // path "" logs to stderr; otherwise the file is opened for append. Returns nullptr
  // (and sets *error) when the file cannot be opened.
  static AccessLog* open(const std::string& path, std::string* error);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void write(const AccessEntry& entry);

 private:
  AccessLog(std::FILE* out, bool owned) : out_(out), owned_(owned) {}
  std::mutex mutex_;
  std::FILE* out_;
  bool owned_;
};

}  // namespace trainfit::cli
