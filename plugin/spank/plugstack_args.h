// plugstack.conf's words after the plugin's path: default_gpu=NAME, conf=PATH,
// catalog_dir=DIR and the endpoint words, into the state's Settings (state.h).
#pragma once

#include "state.h"
#include "trainfit/error.h"

namespace trainfit::spank {

// endpoint= and its companions are checked where they are used: sbatch, salloc and srun,
// not slurmstepd. The error is plugstack.conf's one line.
Result<bool> take_plugstack_args(int ac, char** av, bool endpoint_used, Settings* settings);

}  // namespace trainfit::spank
