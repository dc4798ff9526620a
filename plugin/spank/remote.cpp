// slurmstepd: the options are registered so that the values srun and sbatch exported reach
// their callbacks, which ignore them there (remote); the step was judged in srun. No
// catalogs, no endpoint: every step loads the plugin twice.
#include "contexts.h"
#include "options.h"
#include "plugstack_args.h"
#include "say.h"
#include "state.h"

namespace trainfit::spank {
namespace {

int init(spank_t sp, int ac, char** av) {
  Result<bool> read = take_plugstack_args(ac, av, /*endpoint_used=*/false, &state().settings);
  if (!read) return refused(read.error().message);
  Result<bool> registered = register_options(sp);
  return registered ? 0 : refused(registered.error().message);
}

}  // namespace

const ContextHooks kRemoteHooks = {init, nullptr, nullptr};

}  // namespace trainfit::spank
