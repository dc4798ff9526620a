// Small pieces the admission files share (not part of the API).
#pragma once

#include <string>

#include "trainfit/admission.h"
#include "trainfit/util/file.h"

namespace trainfit::admission {

// A decision that refuses or warns, with its reason and message.
inline Decision decision_of(Verdict verdict, Reason reason, std::string message) {
  Decision d;
  d.verdict = verdict;
  d.reason = reason;
  d.message = std::move(message);
  return d;
}

}  // namespace trainfit::admission
