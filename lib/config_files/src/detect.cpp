// Which framework a config file belongs to: its extension names the format, and the
// format names the framework; a name without one is read as Megatron-LM arguments
// when its words are --flags. Decided from the name and the parsed text, never by
// searching the text for words.
#include "trainfit/util/text.h"
#include "readers.h"

namespace trainfit {
namespace {

std::string extension_of(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? std::string() : lower(base.substr(dot + 1));
}

}  // namespace

Result<ConfigFile> read_config_file_text(const std::string& text, const std::string& name_hint) {
  const std::string extension = extension_of(name_hint);
  if (extension == "json") return config_files::read_deepspeed(text, name_hint);
  if (extension == "yaml" || extension == "yml") return config_files::read_torchtune(text, name_hint);
  if (extension == "toml") return config_files::read_torchtitan(text, name_hint);
  if (config_files::looks_like_flags(text)) return config_files::read_megatron_args(text, name_hint);
  return make_error(ErrorCode::kInvalidValue, "config",
                    name_hint + ": not a config file trainfit reads; accepted: a DeepSpeed .json, a torchtune "
                                ".yaml/.yml recipe, a torchtitan .toml job config, or a file of Megatron-LM "
                                "--flag arguments");
}

}  // namespace trainfit
