#include "plugstack_args.h"

#include <string>

namespace trainfit::spank {
namespace {

Result<bool> take_arg(const std::string& arg, Settings* settings) {
  const size_t eq = arg.find('=');
  const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
  if (key == "default_gpu") settings->default_gpu = value;  // checked with the catalogs
  else if (key == "conf") settings->conf = value;
  else if (key == "catalog_dir") settings->catalog_dir = value;
  else if (!take_endpoint_arg(key, value, &settings->endpoint)) {
    return make_error(ErrorCode::kUnknownField, key,
                      "spank_trainfit: plugstack.conf: unknown argument '" + arg +
                          "'; accepted: default_gpu=NAME, conf=PATH, catalog_dir=DIR, endpoint=URL[,URL...], "
                          "endpoint_connect_timeout_ms=MS, endpoint_timeout_ms=MS, cacert=FILE, "
                          "endpoint_fallback=local|refuse");
  }
  return true;
}

Result<bool> take_endpoint_settings(Settings* settings) {
  Result<std::optional<remote::Settings>> client = endpoint_settings(settings->endpoint);
  if (!client) {
    const Error& error = client.error();
    return make_error(error.code, error.field, "spank_trainfit: plugstack.conf: " + error.message);
  }
  settings->client = client.value();
  return true;
}

}  // namespace

Result<bool> take_plugstack_args(int ac, char** av, bool endpoint_used, Settings* settings) {
  for (int i = 0; i < ac; ++i) {
    Result<bool> taken = take_arg(av[i], settings);
    if (!taken) return taken;
  }
  return endpoint_used ? take_endpoint_settings(settings) : Result<bool>(true);
}

}  // namespace trainfit::spank
