#include "trainfit/host_offload.h"

#include <algorithm>

namespace trainfit {

HostOffloadNode host_offload_per_node(const Config& c, const Breakdown& b) {
  HostOffloadNode node;
  node.assumed = c.gpus_per_node <= 0 || c.gpus_per_node_assumed;
  const int64_t per_node = c.gpus_per_node > 0 ? c.gpus_per_node : kDefaultGpusPerNode;
  node.gpus = std::max<int64_t>(1, std::min(per_node, c.num_gpus));
  node.bytes = b.host_offload_per_gpu * static_cast<double>(node.gpus);
  return node;
}

}  // namespace trainfit
