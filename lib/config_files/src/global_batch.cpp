// The batch per optimizer step a config file states, turned into micro-batches per
// step once the GPU count is known: data-parallel size = GPUs / (TP x PP x CP), as in
// DeepSpeed (config.py _batch_assertion), Megatron (num_microbatches_calculator.py)
// and torchtitan (train.py gradient_accumulation_steps).
#include "trainfit/config_file.h"

namespace trainfit {
namespace {

std::string n(int64_t value) { return std::to_string(value); }

Error inconsistent(const std::string& key, const std::string& message) {
  return make_error(ErrorCode::kInconsistent, key, message);
}

// DeepSpeed without train_micro_batch_size_per_gpu: micro = batch / (accumulation x DP),
// accumulation 1 when not given either (config.py _set_batch_related_parameters).
Result<bool> derive_micro_batch(const GlobalBatch& batch, int64_t dp, Request& request) {
  const int64_t accumulation = request.num_microbatches.value_or(1);
  if (accumulation < 1) return true;
  if (batch.sequences % (accumulation * dp) != 0) {
    return inconsistent(batch.key, batch.key + "=" + n(batch.sequences) + " is not a multiple of accumulation " +
                                       n(accumulation) + " x data-parallel " + n(dp));
  }
  request.micro_batch = batch.sequences / (accumulation * dp);
  return true;
}

}  // namespace

Result<std::vector<std::string>> apply_global_batch(const ConfigFile& file, Request& request) {
  if (!file.global_batch) return std::vector<std::string>();
  const GlobalBatch& batch = file.global_batch.value();
  const std::string stated = batch.key + "=" + n(batch.sequences);
  const bool flag_set_accumulation = request.num_microbatches != file.request.num_microbatches;
  if (flag_set_accumulation) return std::vector<std::string>{stated + " not applied: num_microbatches was given"};
  if (!request.num_gpus) {
    return std::vector<std::string>{stated + " not applied: it needs the GPU count (num_gpus)"};
  }
  const int64_t model_parallel = request.tensor_parallel.value_or(1) * request.pipeline_parallel.value_or(1) *
                                 request.context_parallel.value_or(1);
  if (model_parallel < 1 || *request.num_gpus < 1 || *request.num_gpus % model_parallel != 0) {
    return std::vector<std::string>();  // resolve() reports the layout
  }
  const int64_t dp = *request.num_gpus / model_parallel;
  if (!request.micro_batch) {
    Result<bool> derived = derive_micro_batch(batch, dp, request);
    if (!derived) return derived.error();
  }
  const int64_t micro = request.micro_batch.value_or(1);
  if (micro < 1) return std::vector<std::string>();
  const int64_t per_pass = batch.local_batch > 0 ? batch.local_batch : micro;
  const std::string layout = "micro_batch=" + n(micro) + " x data-parallel " + n(dp) + " (num_gpus=" +
                             n(*request.num_gpus) + " / TP x PP x CP " + n(model_parallel) + ")";
  if (batch.sequences % (per_pass * dp) != 0) {
    return inconsistent(batch.key, stated + " is not a whole number of steps of " + layout);
  }
  const int64_t microbatches = batch.sequences / (micro * dp);
  if (!batch.accumulation_key.empty() && request.num_microbatches && *request.num_microbatches != microbatches) {
    return inconsistent(batch.key, stated + " disagrees with " + batch.accumulation_key + "=" +
                                       n(*request.num_microbatches) + " at " + layout + ": that is " +
                                       n(micro * *request.num_microbatches * dp) + " sequences per step");
  }
  request.num_microbatches = microbatches;
  return std::vector<std::string>{stated + " gives num_microbatches=" + n(microbatches) + " at " + layout};
}

std::vector<std::string> config_file_notes(const ConfigFile& file) {
  std::vector<std::string> notes;
  auto add = [&](const char* label, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    std::string line = label;
    for (size_t i = 0; i < keys.size(); ++i) line += (i == 0 ? ": " : ", ") + keys[i];
    notes.push_back(line);
  };
  for (const std::string& line : file.inferred) notes.push_back("from the file's layout: " + line);
  add("not modelled (affects memory)", file.not_modelled);
  add("left unset", file.left_unset);
  add("not recognised", file.unrecognised);
  add("ignored (no effect on memory)", file.ignored);
  return notes;
}

}  // namespace trainfit
