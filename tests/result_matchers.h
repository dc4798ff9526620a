// Checking a Result<T> in a test by its structure: succeeded or not, and the error's code
// and field; the message is checked only where its words are what the user is promised.
#pragma once

#include <gtest/gtest.h>

#include <ostream>

#include "trainfit/error.h"

namespace trainfit {

// gtest shows an ErrorCode by its name ("kMalformed"), not as bytes, when an assertion fails.
inline void PrintTo(ErrorCode code, std::ostream* os) { *os << error_code_name(code); }

}  // namespace trainfit

namespace trainfit::testing {

// Passes when the result holds a value; a failure shows the error's message.
template <typename T>
::testing::AssertionResult Succeeded(const Result<T>& result) {
  if (result.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "failed: " << error_code_name(result.error().code) << " ["
                                       << result.error().field << "] " << result.error().message;
}

// The error of a result that must have failed (an empty Error, and a test failure, if it did not).
template <typename T>
Error failure_of(const Result<T>& result) {
  if (result.ok()) {
    ADD_FAILURE() << "succeeded where an error was expected";
    return Error{};
  }
  return result.error();
}

}  // namespace trainfit::testing
