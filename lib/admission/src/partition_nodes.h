// A partition's nodes as slurm.conf defines them, seen from one job: which kinds its
// --constraint selects, their GPU types, how many GPU nodes and GPUs (partition_nodes.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainfit/admission.h"

namespace trainfit::admission {

// The partition's node kinds ("" = the default partition); nullptr when slurm.conf does not say.
const std::vector<NodeKind>* partition_kinds(const Policy& policy, const std::string& partition);

// The kinds a --constraint selects: a single feature, "a|b" (any) or "a&b" (all). Any other
// expression (brackets, counts, "!", a mix of | and &), or one that selects none of the
// partition's nodes, is not read: every kind (docs/slurm.md, "GPU types from slurm.conf").
std::vector<const NodeKind*> selected_kinds(const std::vector<NodeKind>& kinds, const std::string& constraint);

// Nodes with GPUs of `type` (a slurm.conf GRES type, case-insensitive; "" = any) and those GPUs.
struct GpuNodes {
  int64_t nodes = 0, gpus = 0;
};
GpuNodes gpu_nodes(const std::vector<const NodeKind*>& kinds, const std::string& type);

// Groups nodes into kinds (for the policy's load, not the job path).
std::vector<NodeKind> kinds_of(const std::vector<const SlurmNode*>& nodes);

}  // namespace trainfit::admission
