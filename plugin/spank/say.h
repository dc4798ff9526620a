// Lines for the user's terminal (sbatch, salloc, srun) or slurmstepd's log, made printable
// first: values come from the user.
#pragma once

#include <string>

extern "C" {
#include <slurm/spank.h>
}

#include "trainfit/admission.h"

namespace trainfit::spank {

inline void say_error(const std::string& message) { slurm_error("%s", admission::printable(message).c_str()); }

inline void say(const std::string& message) { slurm_spank_log("%s", admission::printable(message).c_str()); }

// A hook's refusal: the line, then Slurm's -1.
inline int refused(const std::string& message) {
  say_error(message);
  return -1;
}

}  // namespace trainfit::spank
