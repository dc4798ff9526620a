// Site catalogs (docs/site.md): catalog_dir=DIR, else $TRAINFIT_CATALOG_DIR, else
// /etc/trainfit; read and default_gpu= checked against them once per process: at init in
// sbatch and salloc (a plugstack.conf mistake shows at once), in srun only for a step with
// --llm-* options of its own, never in slurmstepd: every step loads the plugin twice, and
// parsing the catalogs costs each process ~0.4 ms.
#pragma once

#include <string>

#include "trainfit/error.h"

namespace trainfit::spank {

// default_gpu='s catalog name. The first call reads the catalogs and logs what is wrong;
// later calls (until slurm_spank_exit) give the same answer: a failure stays a failure.
const Result<std::string>& catalog_default_gpu();

}  // namespace trainfit::spank
