// spank_trainfit: the user's side. Gives sbatch, salloc and srun the --llm-* options
// (options.h), fails malformed values at once, reads --llm-hf-config and --llm-config on
// the submit host (submission.h: the geometry and the config file's fields travel in the
// job's environment as TRAINFIT_GEOMETRY and TRAINFIT_CONFIG key=value lists), and refuses
// srun steps inside an allocation that are predicted to run out of memory. The annotation
// is read by the same function job_submit uses (annotation_from_spank_env) and steps are
// judged by the same decide(); the verdict on a submission (and --llm-check's report) is
// slurmctld's.
//
// This file: the symbols Slurm looks up, each hook dispatched to its context's file
// (contexts.h), and no exception across the C boundary.
extern "C" {
#include <slurm/spank.h>
}

#include "contexts.h"
#include "say.h"
#include "state.h"

extern "C" {
#define EXPORT __attribute__((visibility("default")))
EXPORT extern const char plugin_name[];
EXPORT extern const char plugin_type[];
EXPORT extern const unsigned int plugin_version;
EXPORT extern const unsigned int spank_plugin_version;
const char plugin_name[] = "trainfit";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;
EXPORT int slurm_spank_init(spank_t sp, int ac, char** av);
EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
EXPORT int slurm_spank_local_user_init(spank_t sp, int ac, char** av);
EXPORT int slurm_spank_exit(spank_t sp, int ac, char** av);
}

namespace {

using trainfit::spank::ContextHooks;
using trainfit::spank::say_error;

// slurmd and the job script's prolog/epilog: nothing to do.
const ContextHooks* hooks_here() {
  switch (spank_context()) {
    case S_CTX_ALLOCATOR: return &trainfit::spank::kAllocatorHooks;
    case S_CTX_LOCAL: return &trainfit::spank::kLocalHooks;
    case S_CTX_REMOTE: return &trainfit::spank::kRemoteHooks;
    default: return nullptr;
  }
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    const ContextHooks* hooks = hooks_here();
    return hooks != nullptr && hooks->init != nullptr ? hooks->init(sp, ac, av) : 0;
  } catch (...) {
    say_error("spank_trainfit: internal error at init");
    return -1;
  }
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
  try {
    const ContextHooks* hooks = hooks_here();
    return hooks != nullptr && hooks->init_post_opt != nullptr ? hooks->init_post_opt(sp) : 0;
  } catch (...) {
    say_error("trainfit: internal error while checking the annotation");
    return -1;
  }
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  try {
    const ContextHooks* hooks = hooks_here();
    return hooks != nullptr && hooks->local_user_init != nullptr ? hooks->local_user_init(sp) : 0;
  } catch (...) {
    say_error("trainfit: internal error while checking the step");
    return -1;
  }
}

// The options given, the settings and the files read: freed as sbatch, salloc, srun or
// slurmstepd finishes with the plugin. The option table stays: Slurm holds its strings.
extern "C" int slurm_spank_exit(spank_t /*sp*/, int /*ac*/, char** /*av*/) {
  trainfit::spank::free_state();
  return 0;
}
