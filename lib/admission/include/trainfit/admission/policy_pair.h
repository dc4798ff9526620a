// The policy and the GPU catalog jobs use are one pair: every GPU trainfit.conf names
// (default_gpu, partition.NAME.default_gpu, gpu_alias targets) must be in the catalog. The
// job_submit plugin checks a new site catalog against the policy in force before installing
// it (a policy is parsed against the catalog in force, so it is checked when it loads).
#pragma once

#include <vector>

#include "trainfit/admission/policy.h"
#include "trainfit/catalog.h"
#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit::admission {

// True when every GPU the policy names is in gpus (by name or alias, case-insensitive);
// else a kUnknownName error naming the first key whose GPU is missing and its value.
TRAINFIT_API Result<bool> policy_resolves_in(const Policy& policy, const std::vector<GpuSpec>& gpus);

// A bridge for a catalog and a trainfit.conf changed together (a GPU renamed in both): adds to
// `set` the GPUs of `in_use` that the policy names and the set lacks, each with a note, so that
// the policy in force resolves in it and the new trainfit.conf can be parsed against it.
TRAINFIT_API void keep_gpus_named(const Policy& policy, const std::vector<GpuSpec>& in_use, CatalogSet& set);

}  // namespace trainfit::admission
