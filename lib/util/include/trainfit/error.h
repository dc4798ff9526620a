// One error type for every face of trainfit: the CLI maps it to exit code 2,
// the Slurm plugin to err_msg, the HTTP service to a 400 JSON body.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "trainfit/export.h"

namespace trainfit {

enum class ErrorCode {
  kInvalidValue,   // a field holds a value outside what is accepted
  kUnknownField,   // a request names a field trainfit does not know
  kUnknownName,    // a model or GPU name not in the catalog
  kMalformed,      // text that is not valid JSON / key=value
  kInconsistent,   // fields that contradict each other
  kMissing,        // a required field is absent
  kUnavailable,    // a resource that may come back by itself (EMFILE, ENOMEM, EAGAIN): try again
  kInternal,       // a bug: reported, never thrown
};

TRAINFIT_API const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string field;    // request field the error is about ("" if none)
  std::string message;  // one line: names the field, the value and what is accepted
  // When the error is about a place in a file: its 1-based line (0: the file as a whole) and
  // the message without the place it starts with ("PATH: ", "trainfit.conf line N: "), so
  // that a caller can say where in its own way (check-config's PATH:LINE:).
  int line = 0;
  std::string reason;
};

// A value or an Error; no exceptions cross trainfit's API. One or the other is held (a
// variant): a result that succeeds never builds or destroys an Error, which every call
// inside slurmctld's job path would otherwise pay for.
template <typename T>
class Result {
 public:
  // By reference, not by value: a value parameter is one more copy of T in the caller's frame
  // (a 1.2 KB Response on slurmctld's RPC stack, whose fresh pages each cost a fault).
  Result(const T& value) : state_(std::in_place_index<0>, value) {}  // NOLINT: implicit by design
  Result(T&& value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Asking an error for its value is a bug: debug builds abort, saying which error it was.
  const T& value() const& { return *held(); }
  T& value() & { return *held(); }
  T&& value() && { return std::move(*held()); }
  const T* operator->() const { return held(); }
  T* operator->() { return held(); }
  const T& operator*() const { return *held(); }
  // A result that succeeded has no error: an empty one (code kInternal, no message).
  const Error& error() const {
    const Error* error = std::get_if<1>(&state_);
    return error != nullptr ? *error : no_error();
  }

 private:
  static const Error& no_error() {
    static const Error none;
    return none;
  }
  void expect_value() const {
#ifndef NDEBUG
    if (!ok()) {
      std::fprintf(stderr, "trainfit: Result::value() called on an error: %s\n", std::get_if<1>(&state_)->message.c_str());
      std::abort();
    }
#endif
  }
  const T* held() const { return (expect_value(), std::get_if<0>(&state_)); }
  T* held() { return (expect_value(), std::get_if<0>(&state_)); }

  std::variant<T, Error> state_;
};

// An error quotes at most this many bytes of a value (quoted_excerpt, util/text.h), so a
// huge value still makes a one-line message.
constexpr size_t kMaxQuotedBytes = 64;

inline Error make_error(ErrorCode code, std::string field, std::string message) {
  return Error{code, std::move(field), std::move(message), 0, {}};
}

// An error at a place in a file: message = where + ": " + reason.
inline Error located_error(ErrorCode code, std::string field, const std::string& where, int line, std::string reason) {
  return Error{code, std::move(field), where + ": " + reason, line, std::move(reason)};
}

}  // namespace trainfit
