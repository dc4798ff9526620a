// Host RAM that offload needs on one node (the estimate gives it per GPU).
#pragma once

#include <cstdint>

#include "trainfit/config.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"

namespace trainfit {

struct HostOffloadNode {
  double bytes = 0;      // host RAM per node: per GPU x gpus
  int64_t gpus = 0;      // GPUs of the job on one node: gpus_per_node, at most num_gpus
  bool assumed = false;  // gpus_per_node was not given: kDefaultGpusPerNode (config.h) (at most num_gpus)
};
TRAINFIT_API HostOffloadNode host_offload_per_node(const Config& config, const Breakdown& breakdown);

}  // namespace trainfit
