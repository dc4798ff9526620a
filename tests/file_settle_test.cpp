// The reloaders' rule for a file that keeps changing (util/file_stamp.h): wait while it may be
// mid-edit, but never longer than kMaxSettleMs from when the change was seen.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "trainfit/util/file_stamp.h"

namespace trainfit {
namespace {

TEST(PendingChange, WaitsWhileMidEditButNotLongerThanTheBound) {
  PendingChange pending;
  EXPECT_TRUE(pending.ready(false, 0));             // settled: read at once
  EXPECT_FALSE(pending.ready(true, 1000));          // seen at 1000 ms
  EXPECT_FALSE(pending.ready(true, 1000 + kMaxSettleMs - 1));
  EXPECT_TRUE(pending.ready(true, 1000 + kMaxSettleMs));  // still changing: read anyway
  pending.clear();                                  // read: the next change waits afresh
  EXPECT_FALSE(pending.ready(true, 1000 + kMaxSettleMs + 1));
}

TEST(FileStamp, AnMtimeAheadOfTheClockIsMeasured) {
  char dir[] = "/tmp/trainfit-stamp-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/f";
  std::ofstream(path) << "x";
  EXPECT_EQ(mtime_ahead_ms(file_stamp(path)), 0);
  EXPECT_TRUE(may_be_mid_edit(file_stamp(path)));  // just written
  // An hour ahead, as a file server whose clock runs ahead would stamp it.
  const timespec times[2] = {{std::time(nullptr) + 3600, 0}, {std::time(nullptr) + 3600, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  const int64_t ahead = mtime_ahead_ms(file_stamp(path));
  EXPECT_GT(ahead, 3590 * 1000);
  EXPECT_LE(ahead, 3600 * 1000);
  EXPECT_TRUE(may_be_mid_edit(file_stamp(path)));
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace trainfit
