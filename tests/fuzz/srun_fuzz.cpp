// srun's own options as the SPANK plugin reads them (argv between "srun" and the program):
// apply_srun_options, then the step's GPU total. Arguments are NUL-separated, as in
// /proc/PID/cmdline.
#include "fuzz_text.h"
#include "trainfit/admission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit::admission;
  const std::vector<std::string> argv = trainfit::fuzz::split_on(trainfit::fuzz::text_of(data, size), '\0');
  JobGpuFields fields;
  fields.nodes = 2;
  fields.tasks = 16;
  if (apply_srun_options(argv, &fields)) (void)total_gpus(fields);
  return 0;
}
