// Passwd lookups grow their buffer on ERANGE (util/passwd.h): an entry larger than the first
// buffer is found, not read as "unknown user". The expected uid and name are root's, fixed by
// POSIX systems (uid 0), and the first buffer is made too small on purpose.
#include <gtest/gtest.h>

#include "trainfit/util/passwd.h"

namespace trainfit {
namespace {

TEST(Passwd, AnEntryLargerThanTheFirstBufferIsFound) {
  // "root:x:0:0:root:/root:/bin/sh" does not fit in 1 byte: glibc answers ERANGE first.
  const Result<uint32_t> uid = uid_of_user("root", 1);
  ASSERT_TRUE(uid.ok()) << uid.error().message;
  EXPECT_EQ(uid.value(), 0u);
  const Result<std::string> name = name_of_uid(0, 1);
  ASSERT_TRUE(name.ok()) << name.error().message;
  EXPECT_EQ(name.value(), "root");
}

TEST(Passwd, AnUnknownUserIsMissingNotAFailure) {
  const Result<uint32_t> uid = uid_of_user("trainfit-no-such-user-0d1e");
  ASSERT_FALSE(uid.ok());
  EXPECT_EQ(uid.error().code, ErrorCode::kMissing);
  EXPECT_EQ(uid.error().message, "user 'trainfit-no-such-user-0d1e' is not known to this host");
  const Result<std::string> name = name_of_uid(4000000123u, 1);
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.error().code, ErrorCode::kMissing);
}

}  // namespace
}  // namespace trainfit
