// Site catalogs (docs/site.md): catalog_dir=DIR, else $TRAINFIT_CATALOG_DIR, else
// /etc/trainfit; read and default_gpu= checked against them once per process, only for a
// submission or an srun step with --llm-* options of its own (init_post_opt in sbatch and
// salloc, local_user_init in srun), never at init and never in slurmstepd: a broken catalog
// file must not fail every sbatch and salloc of the cluster (the plugin is `required`), every
// step loads the plugin twice, and parsing the catalogs costs each process ~0.4 ms.
#pragma once

#include <string>

#include "trainfit/error.h"

namespace trainfit::spank {

// default_gpu='s catalog name. The first call reads the catalogs; later calls (until
// slurm_spank_exit) give the same answer. The error is one line for the user's terminal:
// the first catalog problem (file, line, reason) and how many more, or the plugstack.conf
// default_gpu= the catalogs do not know.
const Result<std::string>& catalog_default_gpu();

}  // namespace trainfit::spank
