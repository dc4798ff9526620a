#include "site_catalogs.h"

#include "state.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/catalog.h"

namespace trainfit::spank {
namespace {

// "FILE:LINE: reason" first, then how many more: one line however many files are broken.
Error catalog_problem(const CatalogSet& set, const std::string& dir) {
  const Error& first = set.problems.front();
  const size_t more = set.problems.size() - 1;
  const std::string others = more == 0 ? "" : " (and " + std::to_string(more) + " more in " + dir + ")";
  return make_error(first.code, first.field,
                    "trainfit: site catalog " + first.message + others + "; --llm-* options cannot be checked until it is fixed");
}

Result<std::string> read_catalogs(const Settings& settings) {
  bool named = false;
  const std::string dir = admission::catalog_dir(settings.catalog_dir, &named);
  const CatalogSet set = admission::load_site_catalogs(dir, named);
  if (!set.problems.empty()) return catalog_problem(set, dir);
  Result<const GpuSpec*> gpu = find_gpu(settings.default_gpu);
  if (!gpu) return make_error(gpu.error().code, "default_gpu", "spank_trainfit: plugstack.conf: " + gpu.error().message);
  return gpu.value()->name;
}

}  // namespace

const Result<std::string>& catalog_default_gpu() {
  State& s = state();
  if (!s.default_gpu) s.default_gpu.emplace(read_catalogs(s.settings));
  return *s.default_gpu;
}

}  // namespace trainfit::spank
