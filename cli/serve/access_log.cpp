#include "access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

namespace trainfit::cli {

namespace {

// "2026-12-02T23:40:01.123Z": UTC, milliseconds. The seconds' text is formatted once a
// second per thread (strftime is a measurable share of a request).
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  thread_local std::time_t cached_second = -1;
  thread_local char cached[32];
  if (seconds != cached_second) {
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    std::strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
    cached_second = seconds;
  }
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", cached, static_cast<int>(ms));
  return out;
}

// Printable ASCII with nothing to escape: the common method and path, written as is.
bool plain(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

}  // namespace

Result<std::unique_ptr<AccessLog>> AccessLog::open(const std::string& path) {
  // The constructor is private: no std::make_unique.
  if (path.empty()) return std::unique_ptr<AccessLog>(new AccessLog(STDERR_FILENO, false, ""));
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    return make_error(ErrorCode::kInvalidValue, "access-log",
                      "access-log='" + path + "' cannot be opened: " + std::strerror(errno));
  }
  return std::unique_ptr<AccessLog>(new AccessLog(fd, true, path));
}

Result<bool> AccessLog::reopen() {
  if (!owned_) return true;  // stderr: nothing to reopen
  const int fresh = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fresh < 0) {
    // Logrotate's folder may be full or briefly unwritable: the next SIGHUP tries again.
    return make_error(ErrorCode::kUnavailable, "access-log",
                      "access-log='" + path_ + "' cannot be opened again: " + std::strerror(errno));
  }
  const bool swapped = ::dup3(fresh, fd_, O_CLOEXEC) >= 0;
  const int dup_errno = errno;
  ::close(fresh);
  if (!swapped) {
    return make_error(ErrorCode::kInternal, "access-log", "access-log='" + path_ + "': dup3: " + std::strerror(dup_errno));
  }
  return true;
}

AccessLog::~AccessLog() {
  if (owned_) ::close(fd_);
}

void AccessLog::write(const AccessEntry& e) {
  std::string line;
  if (plain(e.remote) && plain(e.method) && plain(e.path)) {
    line.reserve(160 + e.path.size());
    line += "{\"time\":\"" + utc_now() + "\",\"remote\":\"" + e.remote + "\",\"method\":\"" + e.method +
            "\",\"path\":\"" + e.path + "\",\"status\":" + std::to_string(e.status) +
            ",\"bytes\":" + std::to_string(e.bytes) + ",\"duration_us\":" + std::to_string(e.duration_us) + "}\n";
  } else {
    nlohmann::ordered_json j = {{"time", utc_now()}, {"remote", e.remote}, {"method", e.method}, {"path", e.path},
                                {"status", e.status}, {"bytes", e.bytes}, {"duration_us", e.duration_us}};
    // The path is the client's bytes: replace invalid UTF-8 rather than throw.
    line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  ssize_t written;
  do {
    written = ::write(fd_, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  if (written != static_cast<ssize_t>(line.size())) lost_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace trainfit::cli
