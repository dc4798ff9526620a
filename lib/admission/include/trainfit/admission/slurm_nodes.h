// slurm.conf's nodes as the gate needs them: names, GPUs, features (slurm_nodes.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainfit/export.h"

namespace trainfit::admission {

// One GPU entry of a node's Gres=: "gpu:a100:4" is {"a100", 4}; "gpu:4" is {"", 4} (untyped:
// slurm.conf does not say which GPU).
struct NodeGpus {
  std::string type;
  int64_t count = 0;
  bool operator==(const NodeGpus& o) const { return type == o.type && count == o.count; }
};

struct SlurmNode {
  std::string name;
  std::vector<NodeGpus> gpus;         // empty: a node without GPUs
  std::vector<std::string> features;  // Features= (or Feature=), as written
  int64_t gpu_count() const;
};

struct SlurmNodes {
  std::vector<SlurmNode> nodes;
  // False when a NodeName= line's hosts could not be expanded (or too many): a partition's
  // nodes are then not known for certain.
  bool complete = true;
};

// At most this many node names are expanded from slurm.conf (beyond: not known).
constexpr size_t kMaxSlurmNodes = 65536;

// GPU entries of a Gres= value as src/common/gres.c (_get_gres_cnt) counts them: entries
// separated by ",", "gpu" alone is one GPU, "gpu:TYPE:N", "gpu:N", "gpu:TYPE" (one), a
// "(S:0-1)" socket binding ignored, "no_consume" not a type, K/M/G count suffixes; other
// GRES (mps, shard, ...) are not GPUs.
TRAINFIT_API std::vector<NodeGpus> node_gpus(const std::string& gres);
// NodeName= lines (NodeName=DEFAULT's Gres= and Features= carried to the lines after it).
TRAINFIT_API SlurmNodes slurm_nodes(const std::string& text);

}  // namespace trainfit::admission
