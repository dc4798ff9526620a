#include "trainfit/util/file_stamp.h"

#include <sys/stat.h>

#include <ctime>

namespace trainfit {
namespace {

constexpr int64_t kNsPerSecond = 1000000000;
constexpr int64_t kNsPerMs = 1000000;
constexpr int64_t kSettleNs = kNsPerSecond;  // how long a changed file is left alone

int64_t ns_of(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * kNsPerSecond + t.tv_nsec; }

int64_t wall_ns() {
  timespec wall{};
  ::clock_gettime(CLOCK_REALTIME, &wall);
  return ns_of(wall);
}

}  // namespace

FileStamp file_stamp(const std::string& path) {
  FileStamp s;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.dev = static_cast<uint64_t>(st.st_dev);
  s.ino = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = ns_of(st.st_mtim);
  s.ctime_ns = ns_of(st.st_ctim);
  return s;
}

bool may_be_mid_edit(const FileStamp& stamp) { return stamp.exists && stamp.mtime_ns + kSettleNs > wall_ns(); }

int64_t mtime_ahead_ms(const FileStamp& stamp) {
  const int64_t ahead = stamp.exists ? stamp.mtime_ns - wall_ns() : 0;
  return ahead > 0 ? ahead / kNsPerMs : 0;
}

bool PendingChange::ready(bool mid_edit, int64_t now_ms) {
  if (!mid_edit) return true;
  if (since_ms_ < 0) since_ms_ = now_ms;
  return now_ms - since_ms_ >= kMaxSettleMs;
}

}  // namespace trainfit
