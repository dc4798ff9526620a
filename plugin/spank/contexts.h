// What the plugin does in each SPANK context, one file each; plugin.cpp's exported hooks
// dispatch on spank_context(). A null hook: nothing to do in that context.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

namespace trainfit::spank {

struct ContextHooks {
  int (*init)(spank_t sp, int ac, char** av);
  int (*init_post_opt)(spank_t sp);
  int (*local_user_init)(spank_t sp);
};

extern const ContextHooks kAllocatorHooks;  // sbatch, salloc (allocator.cpp)
extern const ContextHooks kLocalHooks;      // srun (local.cpp)
extern const ContextHooks kRemoteHooks;     // slurmstepd (remote.cpp)

}  // namespace trainfit::spank
