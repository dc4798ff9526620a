// GRES/TRES strings as Slurm hands them to job_submit ("gres:gpu:h100:8,gres/shard=2").
// A list that parses is rewritten as a resize would, and the rewrite must parse again.
#include <cstdlib>

#include "fuzz_text.h"
#include "trainfit/admission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit::admission;
  const std::string text = trainfit::fuzz::text_of(data, size);
  const auto list = parse_tres(text);
  if (list) {
    const std::string type = list->gpu_types.empty() ? "" : list->gpu_types.front();
    if (!parse_tres(rewrite_tres(list.value(), list->gpu_prefix, type, 16))) abort();  // trainfit wrote what it cannot read
  }
  // The same string in each of the job's GPU fields, with layouts that multiply it.
  JobGpuFields fields;
  fields.per_job = fields.per_node = fields.per_task = fields.per_socket = text;
  fields.nodes = fields.max_nodes = 4;
  fields.tasks = 32;
  fields.tasks_per_node = fields.sockets_per_node = 8;
  (void)total_gpus(fields);
  return 0;
}
