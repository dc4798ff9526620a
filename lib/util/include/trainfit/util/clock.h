// The one clock for intervals (rotation checks, reload periods): monotonic milliseconds.
#pragma once

#include <cstdint>

#include "trainfit/export.h"

namespace trainfit {

// CLOCK_MONOTONIC_COARSE where the kernel has it: a few ms of resolution is plenty for
// once-a-second checks, and it costs no system call.
TRAINFIT_API int64_t monotonic_ms();

}  // namespace trainfit
