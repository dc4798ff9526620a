#include "trainfit/util/file_stamp.h"

#include <sys/stat.h>

#include <ctime>

namespace trainfit {
namespace {

constexpr int64_t kNsPerSecond = 1000000000;
constexpr int64_t kSettleNs = kNsPerSecond;  // how long a changed file is left alone

int64_t ns_of(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * kNsPerSecond + t.tv_nsec; }

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

bool may_be_mid_edit(const FileStamp& stamp) {
  timespec wall{};
  ::clock_gettime(CLOCK_REALTIME, &wall);
  return stamp.exists && stamp.mtime_ns + kSettleNs > ns_of(wall);
}

}  // namespace trainfit
