// The --llm-* options: one table, registered with Slurm at init, each row with the callback
// that stores its value. The hooks look values up by role, never by name.
#pragma once

#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

#include "trainfit/admission.h"
#include "trainfit/error.h"

namespace trainfit::spank {

// What the plugin does with an option's value.
enum class OptionRole {
  kAnnotationValue,  // a field of the annotation: checked alone by its callback, so a typo fails at once
  kCheckFlag,        // --llm-check: slurmctld's to read
  kHfConfig,         // --llm-hf-config: a file, read later (submission.h)
  kConfig,           // --llm-config: a file, read later (submission.h)
};

struct OptionRow {
  const admission::OptionSpec* spec;  // name, arginfo and usage, as lib gives them
  OptionRole role;
  std::string name;                   // "llm-seq": Slurm keeps the pointer
  std::string usage;                  // "[trainfit] ..."
  spank_opt_cb_f callback;
};

// One row per admission::llm_options() entry, in its order (a row's index is its val).
const std::vector<OptionRow>& option_table();

// Registers every row (slurm_spank_init only). The error names the option.
Result<bool> register_options(spank_t sp);

// The value given for the option of that role; nullptr when it was not given.
const std::string* given_value(OptionRole role);

}  // namespace trainfit::spank
