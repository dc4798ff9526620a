// sbatch and salloc: the options as one annotation, read exactly as slurmctld will, so that
// a model or settings that make no sense fail before anything is queued; the files' fields
// attached to the job. The verdict on the submission (and --llm-check's report) is slurmctld's.
#include <string>
#include <vector>

#include "contexts.h"
#include "inherited.h"
#include "options.h"
#include "plugstack_args.h"
#include "say.h"
#include "site_catalogs.h"
#include "state.h"
#include "submission.h"
#include "trainfit/admission.h"
#include "trainfit/admission/spank_env.h"

namespace trainfit::spank {
namespace {

using admission::Annotation;

// Fails only on plugstack.conf's own words: the catalogs are read for --llm-* jobs alone.
int init(spank_t sp, int ac, char** av) {
  drop_inherited_annotation();  // before Slurm reads options from the environment
  Result<bool> read = take_plugstack_args(ac, av, /*endpoint_used=*/true, &state().settings);
  if (!read) return refused(read.error().message);
  Result<bool> registered = register_options(sp);
  return registered ? 0 : refused(registered.error().message);
}

// The probe resolve() checks: the annotation on the GPUs its layout needs. The GPU count is
// slurmctld's to judge (sbatch does not see --gpus at this point).
Request probe_of(const Annotation& annotation, const std::string& default_gpu) {
  Request probe = annotation.request;
  if (!probe.gpu) probe.gpu = default_gpu;
  probe.num_gpus = probe.tensor_parallel.value_or(1) * probe.pipeline_parallel.value_or(1) *
                   probe.context_parallel.value_or(1) * probe.expert_parallel.value_or(1);
  return probe;
}

// The files' fields travel with the job (slurmctld cannot read the submit host's files).
int attach_file_fields(spank_t sp, const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name != admission::kGeometryVariable && name != admission::kConfigVariable) continue;
    if (spank_job_control_setenv(sp, name.c_str(), entry.substr(name.size() + 1).c_str(), 1) != ESPANK_SUCCESS) {
      return refused("trainfit: could not attach " + name + " to the job");
    }
  }
  return 0;
}

int init_post_opt(spank_t sp) {
  if (state().given.empty()) return 0;
  const Result<std::string>& default_gpu = catalog_default_gpu();
  if (!default_gpu) return refused(default_gpu.error().message);
  Result<std::vector<std::string>> env = job_env();
  if (!env) return refused("trainfit: " + env.error().message);
  Annotation annotation;
  Result<bool> read = admission::annotation_from_spank_env(env.value(), &annotation);
  if (!read) return refused("trainfit: " + read.error().message);
  // --llm-check alone: the job's comment is the annotation, slurmctld's to read.
  if (!annotation.found) return 0;
  const Request probe = probe_of(annotation, default_gpu.value());
  const Settings& settings = state().settings;
  Result<bool> valid = settings.client ? check_probe(*settings.client, probe, annotation.check) : check_probe_locally(probe);
  if (!valid) return refused("trainfit: " + valid.error().message);
  if (attach_file_fields(sp, env.value()) != 0) return -1;
  if (const std::string* path = given_value(OptionRole::kConfig)) {
    const Result<ConfigFields>& file = config_file(*path);  // read above: not again
    if (file) log_config_notes(file.value());
  }
  return 0;
}

}  // namespace

const ContextHooks kAllocatorHooks = {init, init_post_opt, nullptr};

}  // namespace trainfit::spank
