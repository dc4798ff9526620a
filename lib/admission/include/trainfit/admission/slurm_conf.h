// slurm.conf's partitions and site settings as the gate needs them (slurm_conf.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/admission/slurm_nodes.h"

namespace trainfit::admission {

struct SlurmPartition {
  std::string name;          // as Slurm matches it: case-sensitive
  bool whole_nodes = false;  // OverSubscribe=EXCLUSIVE: every job holds its nodes whole
  bool is_default = false;   // Default=YES: where a job without -p runs
  // The most nodes one job can have there: its Nodes= counted, or MaxNodes= when lower;
  // 0 when not known (a NodeSet, an expression this reader does not count).
  int64_t max_nodes = 0;
  // Its Nodes= as node names (ALL, hostlists, NodeSets by Feature= or Nodes=); nullopt when
  // not known for certain (an expression or NodeSet this reader does not expand, a node
  // slurm.conf does not define): the gate then uses trainfit.conf's figures alone.
  std::optional<std::vector<std::string>> nodes;
};
// PartitionName= lines of a slurm.conf text (DEFAULT's settings carried to later lines).
TRAINFIT_API std::vector<SlurmPartition> slurm_partitions(const std::string& text);

// What the gate reads of slurm.conf.
struct SlurmConf {
  SlurmNodes nodes;
  std::vector<SlurmPartition> partitions;
  std::string default_partition;  // the last Default=YES partition (read_config.c); "" = none
  // AccountingStorageEnforce as written, and whether it makes slurmctld check a job's
  // account against the associations (read_config.c: associations, limits, qos, safe,
  // wckeys and all each set ACCOUNTING_ENFORCE_ASSOCS).
  std::string accounting_enforce;
  bool accounts_enforced = false;
  bool qos_enforced = false;  // "qos" or "all": a job's QOS is checked against its association
};
TRAINFIT_API SlurmConf read_slurm_conf(const std::string& text);
// $SLURM_CONF, else /etc/slurm/slurm.conf.
TRAINFIT_API std::string slurm_conf_path();
// The text of the slurm.conf at PATH with each `Include FILE` line replaced by FILE's text, as
// slurmctld reads it (slurm_conf_file.cpp); each file at most kMaxConfBytes. An Include that
// cannot be read is an error naming it (the caller then uses trainfit.conf's figures alone).
// files_read, when given, gets every file read, slurm.conf first: a reloader watches them all.
TRAINFIT_API Result<std::string> slurm_conf_text(const std::string& path,
                                                 std::vector<std::string>* files_read = nullptr);

}  // namespace trainfit::admission
