// Framework config files (--config, --llm-config): DeepSpeed JSON, torchtune YAML,
// torchtitan TOML, Megatron-LM arguments. The first byte picks the kind (the file name's
// extension decides it in trainfit), the rest is the file.
#include "fuzz_text.h"
#include "trainfit/config.h"
#include "trainfit/config_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  if (size == 0) return 0;
  static const char* const kNames[] = {"ds_config.json", "train.yaml", "train.toml", "pretrain.args"};
  const Result<ConfigFile> file = read_config_file_text(fuzz::text_of(data + 1, size - 1), kNames[data[0] % 4]);
  if (!file) return 0;
  (void)config_file_notes(file.value());
  Request request = file->request;  // then the job's GPU count, as the CLI and the plugin do
  request.num_gpus = 8;
  if (apply_global_batch(file.value(), request).ok()) (void)resolve(request);
  return 0;
}
