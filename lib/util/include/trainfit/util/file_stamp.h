// What a reloader compares to know that a file changed, and its one rule for a file that
// may still be being written. trainfit.conf (the job_submit plugin's PolicyStore) and the
// site catalog folders (CatalogWatcher) both reload by these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/export.h"

namespace trainfit {

// A file's identity and last change: a replaced file (new inode), one written in place
// (size, mtime) and one whose mtime was set back (ctime) all compare different.
struct FileStamp {
  bool exists = false;
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp& o) const {
    return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
           ctime_ns == o.ctime_ns;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};

// stat(2) of the path (following links, as the reader does); exists = false when it fails.
TRAINFIT_API FileStamp file_stamp(const std::string& path);

// Several files' stamps, by name: a folder's catalog files.
using FileStamps = std::vector<std::pair<std::string, FileStamp>>;

// Modified within the last second by the wall clock: an editor may be writing it in place,
// so a reloader looks again at its next check rather than read half a file.
TRAINFIT_API bool may_be_mid_edit(const FileStamp& stamp);

// How far the file's mtime is ahead of this host's wall clock, in ms (0: not ahead). A file
// on a server whose clock runs ahead looks mid-edit until the clocks meet: a reloader says so.
TRAINFIT_API int64_t mtime_ahead_ms(const FileStamp& stamp);

// The longest a reloader waits for a change to settle: a file rewritten more than once a
// second, or one whose mtime is in the future, is read anyway after this long.
constexpr int64_t kMaxSettleMs = 5000;

// One reloader's wait for a change it has seen but not read yet (the reloader's thread only).
class TRAINFIT_API PendingChange {
 public:
  // Whether to read now: nothing may be mid-edit, or the change has waited kMaxSettleMs
  // (now_ms: monotonic_ms(), trainfit/util/clock.h).
  bool ready(bool mid_edit, int64_t now_ms);
  // The change was read, or there is none: the next one waits from when it is seen.
  void clear() { since_ms_ = -1; }

 private:
  int64_t since_ms_ = -1;  // when the change was first seen (-1: none pending)
};

}  // namespace trainfit
