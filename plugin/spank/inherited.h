// sbatch and salloc inside a job: the enclosing job's --llm-* options are not theirs.
#pragma once

namespace trainfit::spank {

// Removes from this process's environment every trainfit entry an enclosing sbatch or
// salloc left there, before Slurm reads options from it; called at slurm_spank_init in
// sbatch and salloc. What the submission gives itself (its command line, its script's
// #SBATCH lines) is untouched: Slurm reads those after init.
void drop_inherited_annotation();

}  // namespace trainfit::spank
