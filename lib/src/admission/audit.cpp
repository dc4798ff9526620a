// The audit log: one JSON line per decision, appended with a single O_APPEND write.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "trainfit/admission.h"

namespace trainfit::admission {

std::string audit_json(const AuditRecord& r) {
  char when[32] = "";
  const time_t t = static_cast<time_t>(r.time);
  struct tm utc;
  if (gmtime_r(&t, &utc) != nullptr) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const Decision& d = r.decision;
  nlohmann::ordered_json j;
  j["time"] = when;
  j["event"] = r.event;
  j["uid"] = r.uid;
  j["user"] = r.user;
  j["account"] = r.account;
  j["partition"] = r.partition;
  j["job_name"] = r.job_name;
  j["annotation"] = r.annotation;
  j["gpus_requested"] = r.gpus_requested;
  j["gpu"] = d.gpu;
  j["predicted_per_gpu_gb"] = std::round(d.per_gpu_gb * 100.0) / 100.0;
  j["capacity_gb"] = std::round(d.capacity_gb * 100.0) / 100.0;
  j["action"] = to_string(d.verdict);
  j["min_gpus_to_fit"] = d.min_gpus > 0 ? nlohmann::ordered_json(d.min_gpus) : nlohmann::ordered_json(nullptr);
  j["resized_to"] = d.resized_to > 0 ? nlohmann::ordered_json(d.resized_to) : nlohmann::ordered_json(nullptr);
  j["message"] = d.message;
  // Job names and comments are user text: replace invalid UTF-8 rather than throw.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0640);
  if (fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  const std::string record = line + "\n";
  const ssize_t written = ::write(fd, record.data(), record.size());
  const int write_errno = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(record.size())) {
    return "cannot append to " + path + ": " + (written < 0 ? std::strerror(write_errno) : "short write");
  }
  return "";
}

}  // namespace trainfit::admission
