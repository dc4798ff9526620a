#include "serve_access_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

namespace trainfit::cli {

namespace {

// "2026-12-02T23:40:01.123Z": UTC, milliseconds.
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buffer, static_cast<int>(ms));
  return out;
}

}  // namespace

AccessLog* AccessLog::open(const std::string& path, std::string* error) {
  if (path.empty()) return new AccessLog(stderr, false);
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    *error = "access-log='" + path + "' cannot be opened: " + std::strerror(errno);
    return nullptr;
  }
  return new AccessLog(file, true);
}

AccessLog::~AccessLog() {
  if (owned_) std::fclose(out_);
}

void AccessLog::write(const AccessEntry& e) {
  nlohmann::ordered_json j = {{"time", utc_now()}, {"remote", e.remote}, {"method", e.method}, {"path", e.path},
                              {"status", e.status}, {"bytes", e.bytes}, {"duration_us", e.duration_us}};
  // The path is the client's bytes: replace invalid UTF-8 rather than throw.
  const std::string line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace trainfit::cli
