// How an annotation is inherited (Slurm 22.05 to 26.05, the same code in each):
// - sbatch/salloc with --llm-seq=8192 set, at init_post_opt, _SLURM_SPANK_OPTION_trainfit_llm_seq
//   in their own environment and in spank_job_env (src/common/plugstack.c _option_setenv;
//   src/common/spank.c from 23.02), then copy each spank_job_env entry into the environment as
//   SLURM_SPANK_<entry> (src/sbatch/sbatch.c, src/salloc/salloc.c _set_spank_env); the job or
//   salloc's shell gets that environment.
// - an sbatch/salloc run there reads every option back from SLURM_SPANK_<option variable>
//   and calls its callback as if it were given (spank_process_env_options, from
//   src/sbatch/opt.c and src/salloc/opt.c _opt_env): the parent's model, seq, zero and its
//   relative --llm-hf-config reach job_submit as the new job's own.
// slurmctld cannot tell the two apart, so sbatch and salloc drop them here, at
// slurm_spank_init, which runs before any option is read (sbatch.c and salloc.c main).
#include "inherited.h"

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "trainfit/admission/spank_env.h"

extern char** environ;

namespace trainfit::spank {
namespace {

using admission::kConfigVariable;
using admission::kGeometryVariable;
using admission::kSlurmSpankPrefix;
using admission::kSpankOptionPrefix;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// SLURM_SPANK__SLURM_SPANK_OPTION_trainfit_* (what Slurm reads back),
// _SLURM_SPANK_OPTION_trainfit_* and SLURM_SPANK_TRAINFIT_GEOMETRY/CONFIG (what the new job's
// environment would carry on to its own sbatch and srun).
bool inherited(std::string_view name) {
  std::string_view bare = name;
  if (starts_with(bare, kSlurmSpankPrefix)) bare.remove_prefix(kSlurmSpankPrefix.size());
  if (starts_with(bare, kSpankOptionPrefix)) return true;
  return bare != name && (bare == kGeometryVariable || bare == kConfigVariable);
}

}  // namespace

void drop_inherited_annotation() {
  std::vector<std::string> names;  // collected first: unsetenv changes environ
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (inherited(name)) names.emplace_back(name);
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

}  // namespace trainfit::spank
