// Helpers shared by the tests: build a Config from key=value text.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "trainfit/config.h"
#include "trainfit/estimate.h"
#include "trainfit/request.h"

namespace trainfit::testing {

inline Config config_of(const std::string& spec) {
  Request request;
  Result<bool> set = apply_key_values(request, spec);
  EXPECT_TRUE(set.ok()) << set.error().message;
  Result<Resolved> resolved = resolve(request);
  EXPECT_TRUE(resolved.ok()) << spec << ": " << resolved.error().message;
  return resolved.ok() ? resolved->config : Config{};
}

inline Breakdown estimate_of(const std::string& spec) { return estimate(config_of(spec)); }

inline Error error_of(const std::string& spec) {
  Request request;
  Result<bool> set = apply_key_values(request, spec);
  if (!set) return set.error();
  Result<Resolved> resolved = resolve(request);
  EXPECT_FALSE(resolved.ok()) << spec << " should be rejected";
  return resolved.ok() ? Error{} : resolved.error();
}

inline double gib(double bytes) { return bytes / kGiB; }

// A test name from a fixture file: "llama-3-8b.config.json" -> "llama_3_8b".
inline std::string fixture_test_name(std::string file) {
  file = file.substr(0, file.find(".config"));
  for (char& ch : file) if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return file;
}

}  // namespace trainfit::testing
