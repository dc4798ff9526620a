// trainfit.conf: the site policy per partition (policy.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/catalog.h"
#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/admission/slurm_conf.h"

namespace trainfit::admission {

enum class Action { kReject, kResize, kWarn };
TRAINFIT_API const char* to_string(Action action);

// Which figure makes a job "not fitting" for the partition's action (docs/slurm.md, "Deciding on
// the likely range"): kCertain, the likely range's low end (the job does not fit even if the
// model over-predicts it as much as the published suite says it can); kLikely, the point figure.
// A job that is not refused but whose range's high end is past the usable HBM is warned.
enum class RefuseWhen { kCertain, kLikely };
TRAINFIT_API const char* to_string(RefuseWhen when);

struct PartitionPolicy {
  Action action = Action::kReject;
  int64_t resize_max_gpus = 64;
  double headroom = 0.0;           // fraction of HBM kept free
  RefuseWhen refuse_when = RefuseWhen::kCertain;
  // The figure min_gpus_to_fit, and so a resize, is found for: the likely high end (the resized
  // job fits unless the model misses beyond what the suite has seen) or the point figure.
  FitBound resize_to = FitBound::kLikelyHigh;
  std::string default_gpu = "h100";
  int64_t gpus_per_node = 8;       // the node layout: min_gpus_to_fit and resizes use it
  bool require_annotation = false; // for jobs that request GPUs
  std::set<std::string> exempt_users, exempt_accounts, exempt_qos;
  std::set<uint32_t> exempt_uids;  // exempt_users resolved at load (resolve_exempt_users)
};

// Nodes of a partition alike in GPUs and features (slurm.conf), counted: a cluster has few
// kinds of node, so the job path looks at kinds, not at each node.
struct NodeKind {
  std::vector<NodeGpus> gpus;  // empty: no GPUs
  std::vector<std::string> features;
  int64_t nodes = 0;
  int64_t gpus_each() const;
};

struct Policy {
  PartitionPolicy defaults;
  std::map<std::string, PartitionPolicy> partitions;  // overrides, by partition name
  std::map<std::string, std::string> gpu_aliases;     // site GRES type -> catalog name (lower case)
  // The partition slurmctld's default is (job_submit sees no partition for it), so that
  // partition.NAME keys apply to its jobs too; "" = the top-level keys.
  std::string default_partition;
  // The trainfit.conf line that set each site key and first named each partition.NAME, for
  // problems found after parsing (unknown_partitions): "partition.gpu" -> 12.
  std::map<std::string, int> lines;
  std::string audit_log = "/var/log/slurm/trainfit-audit.jsonl";
  bool fail_open = true;  // on_error = open | closed
  // Who may change a job's GPUs, tasks, nodes or partition without restating its annotation
  // (besides root and SlurmUser): `operators = alice,1234`, resolved at load.
  std::set<std::string> operators;
  std::set<uint32_t> operator_uids;
  // unchecked_updates = refuse (default): such an update by anyone else is refused unless it
  // restates the annotation; allow: passed and audited as unchecked (the behaviour before 0.x).
  bool allow_unchecked_updates = false;
  // From slurm.conf (slurm_partitions), not trainfit.conf: partitions whose jobs all hold
  // their nodes whole (OverSubscribe=EXCLUSIVE).
  std::set<std::string> whole_node_partitions;
  // From slurm.conf too: the most nodes a job can have in a partition (SlurmPartition::
  // max_nodes), so that a resize never asks for more nodes than the partition has.
  std::map<std::string, int64_t> partition_max_nodes;
  // From slurm.conf too: each partition's nodes by kind, where slurm.conf says for certain
  // (absent: not known; untyped GPUs are then judged as default_gpu).
  std::map<std::string, std::vector<NodeKind>> partition_nodes;
  const PartitionPolicy& for_partition(const std::string& partition) const;
};

// key = value lines; "# comments"; per-partition overrides as
// "partition.NAME.KEY = VALUE"; "gpu_alias.NAME = CATALOG_NAME". Values of enumerated
// keys are case-insensitive. Errors: "trainfit.conf line N: ...".
TRAINFIT_API Result<Policy> parse_policy(const std::string& text);
// Every key trainfit.conf knows, from the parser's own tables, as written there (per-partition
// keys, then the site's, then "gpu_alias.NAME" and "partition.NAME.KEY").
TRAINFIT_API std::vector<std::string> policy_keys();

// Whether the text has any key = value line (not only blanks and comments): an empty
// trainfit.conf at reload is a file cut short, not a new policy.
TRAINFIT_API bool has_settings(const std::string& text);

// One kUnknownName error per partition.NAME override (and default_partition) that names no
// partition of slurm.conf (field: the key), with the name Slurm has when only the case differs.
TRAINFIT_API std::vector<Error> unknown_partitions(const Policy& policy, const std::vector<SlurmPartition>& slurm);

// on_error as the file states it, read as a key even when the rest of the file is
// invalid (true = open, the default).
TRAINFIT_API bool fail_open_of(const std::string& text);

// Fills exempt_uids from exempt_users (numeric uids or names, through lookup).
// Returns the names that did not resolve.
using UidLookup = std::optional<uint32_t> (*)(const std::string& name);
TRAINFIT_API std::vector<std::string> resolve_exempt_users(Policy& policy, UidLookup lookup);

// The catalog GPU a job's GRES type names: site aliases first, then the catalog's
// names, aliases and NVML/ROCm device names. Errors name the gpu_alias key to add.
TRAINFIT_API Result<const GpuSpec*> catalog_gpu(const Policy& policy, const std::string& gres_type);

// Files the plugins read (with read_regular_file, trainfit/util/file.h).

constexpr size_t kMaxConfBytes = 1 << 20;      // trainfit.conf
constexpr size_t kMaxHfConfigBytes = 4 << 20;  // --llm-hf-config

}  // namespace trainfit::admission
