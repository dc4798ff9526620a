// A training framework's own config file -> a Request in that framework's words
// (framework = deepspeed | torchtune | torchtitan | megatron). Pure: the caller reads
// the file (bounded, regular files only) and passes its text. No exceptions escape.
// The trainfit_config_files library: kept out of trainfit_core and of job_submit,
// which receives the mapped fields as key=value pairs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit {

// The batch per optimizer step a file states (DeepSpeed train_batch_size, torchtitan
// global_batch_size, Megatron --global-batch-size): it becomes num_microbatches only
// once the GPU count is known (apply_global_batch).
struct GlobalBatch {
  int64_t sequences = 0;
  std::string key;              // as the file spells it: "train_batch_size"
  std::string accumulation_key; // the file's own accumulation key, when it gives one
  int64_t local_batch = 0;      // sequences per rank per pass when it differs from micro_batch (torchtitan PP)
};

struct ConfigFile {
  Request request;                        // framework is always set
  std::string kind;                       // "deepspeed" | "torchtune" | "torchtitan" | "megatron"
  std::vector<std::string> ignored;       // keys with no effect on memory (lr, logging, paths, seeds)
  std::vector<std::string> not_modelled;  // keys that affect memory which trainfit does not model
  std::vector<std::string> left_unset;    // values the file leaves to someone else ("auto", null)
  std::vector<std::string> unrecognised;  // keys trainfit does not know (a typo, or a newer release)
  std::vector<std::string> inferred;      // what the file's layout says of the release, and what that sets
  std::string release_at_least;           // the oldest release that has every key the file uses ("": any)
  std::optional<GlobalBatch> global_batch;
};

// Maps a config file's text. The kind comes from name_hint's extension (.json
// DeepSpeed, .yaml/.yml torchtune, .toml torchtitan); any other name is read as
// Megatron-LM arguments when the text parses as --flags. Errors are one line that
// names the key, the value and what is accepted; malformed files give the position.
TRAINFIT_API Result<ConfigFile> read_config_file_text(const std::string& text, const std::string& name_hint);

// Once the request is final (file, then flags): the file's global batch sets
// num_microbatches when num_gpus is known, and is checked against the accumulation
// the file gives. A num_microbatches given by a flag wins. Returns notes to print.
TRAINFIT_API Result<std::vector<std::string>> apply_global_batch(const ConfigFile& file, Request& request);

// The lines to show the user: "ignored (no effect on memory): lr, seed", ...
TRAINFIT_API std::vector<std::string> config_file_notes(const ConfigFile& file);

// Bound on the size of a config file the CLI and the SPANK plugin read.
constexpr size_t kMaxConfigFileBytes = 1 << 20;

}  // namespace trainfit
