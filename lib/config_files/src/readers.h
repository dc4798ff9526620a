// One reader per framework file format (detect.cpp picks one).
#pragma once

#include <string>

#include "trainfit/config_file.h"

namespace trainfit::config_files {

Result<ConfigFile> read_deepspeed(const std::string& text, const std::string& source);
Result<ConfigFile> read_torchtune(const std::string& text, const std::string& source);
Result<ConfigFile> read_torchtitan(const std::string& text, const std::string& source);
Result<ConfigFile> read_megatron_args(const std::string& text, const std::string& source);

// True when the text is Megatron-style arguments: words, the first one a --flag.
bool looks_like_flags(const std::string& text);

}  // namespace trainfit::config_files
