// slurm.conf's partitions as the gate needs them (slurm_conf.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/export.h"

namespace trainfit::admission {

struct SlurmPartition {
  std::string name;          // as Slurm matches it: case-sensitive
  bool whole_nodes = false;  // OverSubscribe=EXCLUSIVE: every job holds its nodes whole
  // The most nodes one job can have there: its Nodes= counted, or MaxNodes= when lower;
  // 0 when not known (a NodeSet, an expression this reader does not count).
  int64_t max_nodes = 0;
};
// PartitionName= lines of a slurm.conf text (DEFAULT's settings carried to later lines).
TRAINFIT_API std::vector<SlurmPartition> slurm_partitions(const std::string& text);
// $SLURM_CONF, else /etc/slurm/slurm.conf.
TRAINFIT_API std::string slurm_conf_path();

}  // namespace trainfit::admission
