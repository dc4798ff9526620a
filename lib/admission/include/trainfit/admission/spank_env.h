// The environment names the SPANK plugin and slurmctld share, written once: the plugin
// (plugin/spank) sets them, job_submit (plugin/job_submit/job_desc.cpp) copies them out of
// job_desc->spank_job_env, annotation_from_spank_env reads them.
#pragma once

#include <string_view>

namespace trainfit::admission {

// An --llm-* option given to sbatch/salloc/srun reaches spank_job_env as
// "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192": SPANK_OPTION_ENV_PREFIX, the plugin's name,
// '_' ("trainfit" is plugin/spank/plugin.cpp's plugin_name), the option's name with non-alphanumerics as '_' (src/common/plugstack.c
// _opt_env_name at slurm-22-05-8-1; src/common/spank.c from 23.02 on).
inline constexpr std::string_view kSpankOptionPrefix = "_SLURM_SPANK_OPTION_trainfit_";

// What the plugin read from --llm-hf-config and --llm-config on the submit host.
inline constexpr std::string_view kGeometryVariable = "TRAINFIT_GEOMETRY";
inline constexpr std::string_view kConfigVariable = "TRAINFIT_CONFIG";

// sbatch and salloc copy every spank_job_env entry into their environment (so into the
// job's) with this prefix (src/sbatch/sbatch.c and src/salloc/salloc.c _set_spank_env), and
// read an option back from "SLURM_SPANK_" + its option variable (src/common/plugstack.c
// spank_process_env_options).
inline constexpr std::string_view kSlurmSpankPrefix = "SLURM_SPANK_";

}  // namespace trainfit::admission
