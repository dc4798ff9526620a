#include "reader_module.h"

#include <dlfcn.h>

#include <string>
#include <vector>

namespace trainfit::spank {
namespace {

// Where to look, in order.
std::vector<std::string> reader_paths() {
  std::vector<std::string> paths;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&reader_paths), &self) != 0 && self.dli_fname != nullptr) {
    const std::string plugin = self.dli_fname;
    paths.push_back(plugin.substr(0, plugin.rfind('/') + 1) + "trainfit_config_reader.so");
  }
  paths.push_back(TRAINFIT_CONFIG_READER_PATH);
  return paths;
}

}  // namespace

Result<ConfigReader> config_reader() {
  static trainfit_read_config_fn reader = nullptr;  // the module stays loaded: never dlclose'd
  if (reader != nullptr) return ConfigReader{reader};
  std::string why;
  for (const std::string& path : reader_paths()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      why += (why.empty() ? "" : "; ") + std::string(dlerror());
      continue;
    }
    reader = reinterpret_cast<trainfit_read_config_fn>(dlsym(handle, TRAINFIT_READ_CONFIG_SYMBOL));
    if (reader != nullptr) return ConfigReader{reader};
    why += (why.empty() ? "" : "; ") + path + ": no " + TRAINFIT_READ_CONFIG_SYMBOL;
  }
  return make_error(ErrorCode::kInternal, "config", why);
}

}  // namespace trainfit::spank
