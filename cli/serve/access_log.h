// The access log: one JSON object per line, each line one write(2) to a file opened
// with O_APPEND, which the kernel appends whole: the event loops share it without a lock
// (a lock held across the write made them queue behind each other's system calls).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "trainfit/error.h"

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
  // path "" logs to stderr; otherwise the file is opened for append (created 0666 less
  // the umask, as fopen does). An error (kInvalidValue, field "access-log") when it cannot be opened.
  static Result<std::unique_ptr<AccessLog>> open(const std::string& path);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void write(const AccessEntry& entry);
  // SIGHUP after logrotate's rename: the path opened again and put in place of the old file
  // with dup2, atomically for the writers (a line being written lands whole in the old file).
  // An error when the path cannot be opened: the old file stays in use.
  Result<bool> reopen();
  // Lines not written in full (a full disk, a closed pipe), counted rather than retried.
  std::uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }

 private:
  AccessLog(int fd, bool owned, std::string path) : fd_(fd), owned_(owned), path_(std::move(path)) {}
  int fd_;  // never changes: reopen() dup2s a new file onto it
  bool owned_;
  std::string path_;
  std::atomic<std::uint64_t> lost_{0};
};

}  // namespace trainfit::cli
