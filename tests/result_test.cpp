// Result<T>: asking an error for its value is a bug that debug builds stop at once, naming the
// error. This file is compiled without NDEBUG (tests/CMakeLists.txt) so that the check is the
// one a debug build has, whatever the build type.
#include <gtest/gtest.h>

#include "trainfit/error.h"
#include "trainfit/json.h"
#include "trainfit/request.h"

namespace trainfit {
namespace {

struct OnlyHere {  // a type no other file instantiates Result with (one definition of value())
  int n = 0;
};

TEST(ResultDeathTest, ValueOfAnErrorAbortsNamingIt) {
  Result<OnlyHere> error = make_error(ErrorCode::kInvalidValue, "seq_length", "seq_length='x' is not valid");
  EXPECT_DEATH((void)error.value(), "Result::value\\(\\) called on an error: seq_length='x' is not valid");
  EXPECT_DEATH((void)error->n, "called on an error");
  Result<OnlyHere> fine = OnlyHere{3};
  EXPECT_EQ(fine.value().n, 3);
}

// No exception crosses the API: a request whose text is not UTF-8 is written with U+FFFD.
TEST(Result, WritersTakeAnyBytes) {
  Request r;
  r.model = std::string("llama\xff\xfe-8b\xc3", 11);
  std::string json;
  EXPECT_NO_THROW(json = request_to_json(r));
  EXPECT_NE(json.find("llama\xEF\xBF\xBD\xEF\xBF\xBD-8b\xEF\xBF\xBD"), std::string::npos) << json;
}

}  // namespace
}  // namespace trainfit
