// How a job is given more GPUs: the count it gets (at least the target, in the
// partition's node layout) and the job fields to write back.
#pragma once

#include <cstdint>
#include <string>

#include "trainfit/admission.h"

namespace trainfit::admission {

struct ResizePlan {
  int64_t granted = 0;  // GPUs the job will have: what the message must say
  std::string tres_per_job, tres_per_node, tres_per_task;  // "" = leave as is
  bool clear_tres_per_socket = false;
  int64_t nodes = 0, tasks = 0;  // 0 = leave as is
  std::string layout;            // "3 nodes x 8", "" on one node
  std::string tasks_note;        // "tasks 8 -> 24 (1 per GPU)" or why the tie was not kept
};

// per_node: GPUs per node of the partition (the one source of truth for the layout).
ResizePlan plan_resize(const JobGpuFields& fields, const GpuTotal& gpus, int64_t target, int64_t per_node);

}  // namespace trainfit::admission
