#include "site_catalogs.h"

#include "say.h"
#include "state.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/catalog.h"

namespace trainfit::spank {
namespace {

Result<std::string> read_catalogs(const Settings& settings) {
  bool named = false;
  const std::string dir = admission::catalog_dir(settings.catalog_dir, &named);
  const CatalogSet set = admission::load_site_catalogs(dir, named);
  for (const Error& problem : set.problems) say_error("spank_trainfit: site catalog: " + problem.message);
  if (!set.problems.empty()) say_error("spank_trainfit: site catalogs in " + dir + " not valid; using the built-in catalogs");
  Result<const GpuSpec*> gpu = find_gpu(settings.default_gpu);
  if (!gpu) {
    say_error("spank_trainfit: plugstack.conf: " + gpu.error().message);
    return gpu.error();
  }
  return gpu.value()->name;
}

}  // namespace

const Result<std::string>& catalog_default_gpu() {
  State& s = state();
  if (!s.default_gpu) s.default_gpu.emplace(read_catalogs(s.settings));
  return *s.default_gpu;
}

}  // namespace trainfit::spank
