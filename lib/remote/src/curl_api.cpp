#include "curl_api.h"

#include <dlfcn.h>

#include <mutex>

namespace trainfit::remote {
namespace {

template <typename F>
bool bind(void* library, const char* name, F* slot) {
  *slot = reinterpret_cast<F>(dlsym(library, name));
  return *slot != nullptr;
}

}  // namespace

Result<const CurlApi*> curl_api() {
  static std::once_flag once;
  static CurlApi api;
  static const CurlApi* loaded = nullptr;
  static const char* problem = "";
  std::call_once(once, [] {
    // RTLD_LOCAL: its symbols stay out of the process (slurm's, another plugin's libcurl).
    void* library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      problem = "libcurl.so.4 cannot be loaded (install libcurl4)";
      return;
    }
    const bool bound = bind(library, "curl_global_init", &api.global_init) && bind(library, "curl_easy_init", &api.easy_init) &&
                       bind(library, "curl_easy_setopt", &api.easy_setopt) &&
                       bind(library, "curl_easy_perform", &api.easy_perform) &&
                       bind(library, "curl_easy_getinfo", &api.easy_getinfo) &&
                       bind(library, "curl_easy_cleanup", &api.easy_cleanup) &&
                       bind(library, "curl_easy_strerror", &api.easy_strerror) &&
                       bind(library, "curl_slist_append", &api.slist_append) &&
                       bind(library, "curl_slist_free_all", &api.slist_free_all) && bind(library, "curl_url", &api.url) &&
                       bind(library, "curl_url_cleanup", &api.url_cleanup) && bind(library, "curl_url_set", &api.url_set) &&
                       bind(library, "curl_url_get", &api.url_get) && bind(library, "curl_free", &api.free);
    if (!bound) {
      problem = "libcurl.so.4 lacks a function trainfit uses (libcurl 7.62 or later is needed)";
      return;
    }
    // curl_global_init is not safe to race; the SPANK plugin and the CLI call in here lazily.
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      problem = "libcurl could not be initialized";
      return;
    }
    loaded = &api;  // never dlclose'd: libcurl's own atexit handlers may still run
  });
  if (loaded == nullptr) return make_error(ErrorCode::kUnavailable, "endpoint", problem);
  return loaded;
}

}  // namespace trainfit::remote
