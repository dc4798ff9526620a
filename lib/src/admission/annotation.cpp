// Job annotations: the SPANK options as they reach slurmctld in spank_job_env,
// and the "trainfit: key=value ..." job comment for clients without the plugin.
#include <cctype>

#include "../text.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

constexpr const char* kSpankPrefix = "_SLURM_SPANK_OPTION_trainfit_";
constexpr const char* kGeometryVariable = "TRAINFIT_GEOMETRY";

// "llm_micro_batch" (Slurm replaces non-alphanumerics with '_') -> "micro-batch".
const OptionSpec* option_from_env_name(const std::string& name) {
  for (const OptionSpec& o : llm_options()) {
    std::string mangled = std::string("llm-") + o.option;
    for (char& c : mangled) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (mangled == name) return &o;
  }
  return nullptr;
}

std::string strip_option_prefix(std::string key) {
  while (!key.empty() && key[0] == '-') key.erase(0, 1);
  if (key.rfind("llm-", 0) == 0) key = key.substr(4);
  return key;
}

}  // namespace

const std::vector<OptionSpec>& llm_options() {
  static const std::vector<OptionSpec> options = {
      {"model", "model", "NAME", "model to train, from 'trainfit models' (e.g. llama3-70b)"},
      {"seq", "seq_length", "N", "sequence length in tokens"},
      {"micro-batch", "micro_batch", "N", "sequences per micro-batch per data-parallel rank"},
      {"zero", "zero_stage", "0..3", "ZeRO stage"},
      {"recompute", "recompute", "none|selective|full", "activation recomputation"},
      {"precision", "precision", "fp32|bf16|bf16-amp|fp16-amp|fp8", "numerics"},
      {"tp", "tensor_parallel", "N", "tensor-parallel size"},
      {"pp", "pipeline_parallel", "N", "pipeline-parallel size"},
      {"spec", "", "KEY=VAL[,KEY=VAL...]", "any trainfit request field (see 'trainfit fields')"},
      {"hf-config", "", "PATH", "Hugging Face config.json giving the geometry (read at submission)"},
      {"check", "", "", "print min_gpus_to_fit for the annotated model and submit"},
  };
  return options;
}

Result<bool> apply_option(Request& request, const std::string& raw_option, const std::string& value) {
  const std::string option = strip_option_prefix(raw_option);
  if (option == "spec") return apply_key_values(request, value, ',');
  if (option == "check") return true;
  if (option == "hf-config") {
    return make_error(ErrorCode::kInvalidValue, "hf-config",
                      "hf-config is read on the submit host by the SPANK plugin (--llm-hf-config); a comment "
                      "cannot carry it: give the geometry fields instead");
  }
  for (const OptionSpec& o : llm_options()) {
    if (option != o.option || o.field[0] == '\0') continue;
    Result<bool> set = set_field_from_text(request, o.field, value);
    if (!set) {
      Error e = set.error();
      e.message = "--llm-" + option + "='" + value + "' is not valid; accepted: " +
                  (find_field(o.field) ? find_field(o.field)->accepted : o.arginfo);
      return e;
    }
    return true;
  }
  return set_field_from_text(request, option, value);  // any request field name or CLI flag
}

Result<bool> annotation_from_spank_env(const std::vector<std::string>& env, Request* request, bool* found) {
  *found = false;
  const size_t prefix = std::char_traits<char>::length(kSpankPrefix);
  std::vector<std::pair<const OptionSpec*, std::string>> options;
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == kGeometryVariable) {
      *found = true;
      Result<bool> set = apply_key_values(*request, value, ',');  // geometry first: options override it
      if (!set) return set.error();
    } else if (name.rfind(kSpankPrefix, 0) == 0) {
      const OptionSpec* option = option_from_env_name(name.substr(prefix));
      if (option == nullptr) continue;
      *found = true;
      options.emplace_back(option, value);
    }
  }
  for (const auto& [option, value] : options) {
    if (std::string(option->option) == "hf-config" || std::string(option->option) == "check") continue;
    Result<bool> set = apply_option(*request, option->option, value);
    if (!set) return set.error();
  }
  return true;
}

Result<bool> annotation_from_comment(const std::string& comment, Request* request, bool* found) {
  const std::string text = trim(comment);
  *found = lower(text.substr(0, 9)) == "trainfit:";
  if (!*found) return true;
  std::string body = text.substr(9);
  for (char& c : body) if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  for (const std::string& token : split(body, ' ')) {
    if (trim(token).empty()) continue;
    const size_t eq = token.find('=');
    if (eq == std::string::npos) {
      return make_error(ErrorCode::kMalformed, token,
                        "trainfit comment: '" + token + "' is not key=value (e.g. trainfit: model=llama3-70b seq=8192)");
    }
    Result<bool> set = apply_option(*request, token.substr(0, eq), token.substr(eq + 1));
    if (!set) return set.error();
  }
  return true;
}

std::string describe(const Request& request) { return to_key_values(request, ' '); }

}  // namespace trainfit::admission
