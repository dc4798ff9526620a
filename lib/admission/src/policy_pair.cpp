#include "trainfit/admission/policy_pair.h"

#include <algorithm>
#include <string>

#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

bool in_catalog(const std::string& name, const std::vector<GpuSpec>& gpus) {
  const std::string wanted = lower(name);
  return std::any_of(gpus.begin(), gpus.end(), [&wanted](const GpuSpec& gpu) {
    if (lower(gpu.name) == wanted) return true;
    return std::any_of(gpu.aliases.begin(), gpu.aliases.end(), [&wanted](const std::string& a) { return lower(a) == wanted; });
  });
}

// The GPU names a policy holds (catalog names, as parse_policy stored them).
std::vector<std::string> gpus_named(const Policy& policy) {
  std::vector<std::string> names{policy.defaults.default_gpu};
  for (const auto& entry : policy.partitions) names.push_back(entry.second.default_gpu);
  for (const auto& entry : policy.gpu_aliases) names.push_back(entry.second);
  return names;
}

Error missing(const std::string& key, const std::string& gpu) {
  return make_error(ErrorCode::kUnknownName, key,
                    "trainfit.conf's " + key + " = " + gpu + " names a GPU the new catalog does not have");
}

}  // namespace

Result<bool> policy_resolves_in(const Policy& policy, const std::vector<GpuSpec>& gpus) {
  if (!in_catalog(policy.defaults.default_gpu, gpus)) return missing("default_gpu", policy.defaults.default_gpu);
  for (const auto& [name, partition] : policy.partitions) {
    if (!in_catalog(partition.default_gpu, gpus)) return missing("partition." + name + ".default_gpu", partition.default_gpu);
  }
  for (const auto& [site_type, target] : policy.gpu_aliases) {
    if (!in_catalog(target, gpus)) return missing("gpu_alias." + site_type, target);
  }
  return true;
}

void keep_gpus_named(const Policy& policy, const std::vector<GpuSpec>& in_use, CatalogSet& set) {
  for (const std::string& name : gpus_named(policy)) {
    if (in_catalog(name, set.gpus)) continue;
    const auto kept = std::find_if(in_use.begin(), in_use.end(), [&name](const GpuSpec& gpu) { return lower(gpu.name) == lower(name); });
    if (kept == in_use.end()) continue;
    set.gpus.push_back(*kept);
    set.notes.push_back("gpu '" + kept->name + "' kept while the trainfit.conf in force names it (it changed too: read next)");
  }
}

}  // namespace trainfit::admission
