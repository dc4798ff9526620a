// `trainfit check-config`: how the audited jobs fall in the uncertain band under a trainfit.conf
// (docs/slurm.md, "Deciding on the likely range").
#pragma once

#include <cstdint>
#include <string>

#include "trainfit/admission/policy.h"
#include "trainfit/error.h"

namespace trainfit::cli::report {

struct BandCount {
  int64_t checked = 0;    // checked records (not exempt, not unchecked) with a likely range
  int64_t uncertain = 0;  // of them, with likely_low <= capacity < likely_high (is_uncertain)
  int64_t refused = 0;    // of those, refused under `policy`'s refuse_when for their partition
};

// Reads the audit log at `path` (the current file only, not its rotations) and counts.
Result<BandCount> count_band(const std::string& path, const admission::Policy& policy);

}  // namespace trainfit::cli::report
