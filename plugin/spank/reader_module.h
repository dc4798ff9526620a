// trainfit_config_reader.so, --llm-config's reader (config_reader.h says why it is a module
// of its own): loaded when a submission first names a config file.
#pragma once

#include "config_reader.h"
#include "trainfit/error.h"

namespace trainfit::spank {

struct ConfigReader {
  trainfit_read_config_fn read;
};

// The reader next to this plugin (a build tree), else where the packages install it. The
// error says why each place failed.
Result<ConfigReader> config_reader();

}  // namespace trainfit::spank
