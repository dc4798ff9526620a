#include "options.h"

#include <cstddef>

#include "say.h"
#include "state.h"

namespace trainfit::spank {
namespace {

using admission::OptionSpec;

// As Slurm does: the last value of a repeated option wins (in the place it was first given).
void remember(size_t row, const std::string& value) {
  for (GivenOption& given : state().given) {
    if (given.row == row) {
      given.value = value;
      return;
    }
  }
  state().given.push_back({row, value});
}

// The callbacks run for the options on the command line and, in srun, again for those an
// enclosing sbatch/salloc exported (SLURM_SPANK__SLURM_SPANK_OPTION_trainfit_*); in
// slurmstepd (remote) they do nothing. Files are read later, only for options that are the
// submission's or the step's own (local.cpp).

// An annotation field: the value alone, so that a typo fails at once.
int take_annotation_value(int val, const char* optarg, int remote) {
  if (remote) return 0;
  try {
    const size_t row = static_cast<size_t>(val);
    const std::string value = optarg != nullptr ? optarg : "";
    admission::Annotation scratch;
    Result<bool> ok = admission::annotation_from_spank_env(
        {admission::spank_env_name(option_table().at(row).spec->option) + "=" + value}, &scratch);
    if (!ok) return refused("trainfit: " + ok.error().message);
    remember(row, value);
    return 0;
  } catch (...) {
    return refused("trainfit: internal error while reading an --llm option");
  }
}

// --llm-check, --llm-hf-config, --llm-config: judged with the whole annotation.
int take_value(int val, const char* optarg, int remote) {
  if (remote) return 0;
  try {
    const size_t row = static_cast<size_t>(val);
    static_cast<void>(option_table().at(row));  // a val Slurm did not get from us: an internal error
    remember(row, optarg != nullptr ? optarg : "");
    return 0;
  } catch (...) {
    return refused("trainfit: internal error while reading an --llm option");
  }
}

// The options not checked alone; every other is an annotation field.
struct SpecialOption {
  const char* option;
  OptionRole role;
};
constexpr SpecialOption kSpecialOptions[] = {
    {"check", OptionRole::kCheckFlag}, {"hf-config", OptionRole::kHfConfig}, {"config", OptionRole::kConfig}};

OptionRole role_of(const OptionSpec& spec) {
  for (const SpecialOption& special : kSpecialOptions) {
    if (std::string(special.option) == spec.option) return special.role;
  }
  return OptionRole::kAnnotationValue;
}

std::vector<OptionRow> make_table() {
  std::vector<OptionRow> table;
  for (const OptionSpec& spec : admission::llm_options()) {
    const OptionRole role = role_of(spec);
    table.push_back({&spec, role, std::string("llm-") + spec.option, std::string("[trainfit] ") + spec.usage,
                     role == OptionRole::kAnnotationValue ? take_annotation_value : take_value});
  }
  return table;
}

}  // namespace

const std::vector<OptionRow>& option_table() {
  static const std::vector<OptionRow> table = make_table();  // never freed: Slurm holds its strings
  return table;
}

Result<bool> register_options(spank_t sp) {
  const std::vector<OptionRow>& table = option_table();
  for (size_t i = 0; i < table.size(); ++i) {
    struct spank_option option;
    option.name = const_cast<char*>(table[i].name.c_str());
    // A flag has no arginfo at all: Slurm's help prints "--NAME=ARGINFO" for any non-NULL one,
    // so an empty string would show "--llm-check=".
    const bool takes_value = table[i].spec->arginfo[0] != '\0';
    option.arginfo = takes_value ? const_cast<char*>(table[i].spec->arginfo) : nullptr;
    option.usage = const_cast<char*>(table[i].usage.c_str());
    option.has_arg = takes_value ? 1 : 0;
    option.val = static_cast<int>(i);
    option.cb = table[i].callback;
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      return make_error(ErrorCode::kInternal, "", "spank_trainfit: could not register --" + table[i].name);
    }
  }
  return true;
}

const std::string* given_value(OptionRole role) {
  for (const GivenOption& given : state().given) {
    if (option_table()[given.row].role == role) return &given.value;
  }
  return nullptr;
}

}  // namespace trainfit::spank
