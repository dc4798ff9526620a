// The policy assembled once (assemble.h): trainfit.conf, its users, slurm.conf's facts.
#include "trainfit/admission/assemble.h"


#include <map>
#include <set>

#include "partition_nodes.h"
#include "trainfit/admission.h"
#include "trainfit/util/passwd.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

Error conf_mismatch(const std::string& key, const std::string& message) {
  return make_error(ErrorCode::kInvalidValue, key, key + ": " + message);
}

// Which partitions hold their nodes whole, how many nodes a job can have, and what nodes
// each has by kind (where slurm.conf says for certain).
void add_partitions(const SlurmConf& slurm, Policy& policy) {
  std::map<std::string, const SlurmNode*> by_name;
  for (const SlurmNode& node : slurm.nodes.nodes) by_name.emplace(node.name, &node);
  for (const SlurmPartition& p : slurm.partitions) {
    if (p.whole_nodes) policy.whole_node_partitions.insert(p.name);
    if (p.max_nodes > 0) policy.partition_max_nodes[p.name] = p.max_nodes;
    if (!p.nodes) continue;
    std::vector<const SlurmNode*> nodes;
    for (const std::string& name : *p.nodes) nodes.push_back(by_name.at(name));
    policy.partition_nodes[p.name] = kinds_of(nodes);
  }
}

// trainfit.conf's default_partition wins; else slurm.conf's Default=YES partition (where a
// job without -p runs, and whose rules it is judged by).
void add_default_partition(const SlurmConf& slurm, Policy& policy, std::vector<Error>* problems) {
  if (policy.default_partition.empty()) {
    policy.default_partition = slurm.default_partition;
    return;
  }
  if (slurm.default_partition.empty() || slurm.default_partition == policy.default_partition) return;
  problems->push_back(conf_mismatch(
      "default_partition", "'" + policy.default_partition + "' but slurm.conf's default partition (Default=YES) is '" +
                               slurm.default_partition + "', where Slurm runs a job without -p; jobs without -p are "
                               "judged by partition " + policy.default_partition +
                               "'s rules: remove default_partition or make it '" + slurm.default_partition + "'"));
}

// Each partition's node GPU types against the catalog and its default_gpu.
void check_gpus(const Policy& policy, std::vector<Error>* problems) {
  for (const auto& [name, kinds] : policy.partition_nodes) {
    const PartitionPolicy& rules = policy.for_partition(name);
    std::set<std::string> types;
    bool untyped = false;
    for (const NodeKind& kind : kinds) {
      for (const NodeGpus& g : kind.gpus) {
        if (g.type.empty()) untyped = true;
        else types.insert(g.type);
      }
    }
    bool has_default = untyped;  // an untyped node's GPUs are judged as default_gpu
    Result<const GpuSpec*> default_gpu = catalog_gpu(policy, rules.default_gpu);
    std::string listed;
    for (const std::string& type : types) {
      listed += (listed.empty() ? "" : ", ") + type;
      Result<const GpuSpec*> gpu = catalog_gpu(policy, type);
      if (!gpu) {
        problems->push_back(conf_mismatch("partition." + name, "its nodes in slurm.conf: " + gpu.error().message +
                                                                   " (jobs asking untyped GPUs there are refused until then)"));
        continue;
      }
      has_default |= default_gpu && gpu.value()->name == default_gpu.value()->name;
    }
    if (types.empty() || has_default) continue;
    problems->push_back(conf_mismatch(
        policy.partitions.count(name) ? "partition." + name + ".default_gpu" : "default_gpu",
        "'" + rules.default_gpu + "' is a GPU none of partition " + name + "'s nodes has (slurm.conf: " + listed +
            "); untyped GPU requests there are judged as the nodes' GPUs"));
  }
}

bool any_exempt(const Policy& policy, std::set<std::string> PartitionPolicy::*exempt) {
  if (!(policy.defaults.*exempt).empty()) return true;
  for (const auto& [name, rules] : policy.partitions) {
    if (!(rules.*exempt).empty()) return true;
  }
  return false;
}

std::string enforce_text(const SlurmConf& slurm) {
  return "slurm.conf's AccountingStorageEnforce" +
         (slurm.accounting_enforce.empty() ? std::string(" is not set") : "='" + slurm.accounting_enforce + "'");
}

}  // namespace

Result<AssembledPolicy> assemble_policy(const std::string& conf_text, const Result<std::string>& slurm_conf_text,
                                        UidLookup lookup) {
  Result<Policy> parsed = parse_policy(conf_text);
  if (!parsed) return parsed.error();
  AssembledPolicy out;
  out.policy = std::move(parsed).value();
  out.unknown_users = resolve_exempt_users(out.policy, lookup);
  if (!slurm_conf_text) {
    out.slurm_conf_note = slurm_conf_text.error().message;
    return out;
  }
  const SlurmConf slurm = read_slurm_conf(slurm_conf_text.value());
  out.problems = unknown_partitions(out.policy, slurm.partitions);
  add_partitions(slurm, out.policy);
  add_default_partition(slurm, out.policy, &out.problems);
  check_gpus(out.policy, &out.problems);
  if (any_exempt(out.policy, &PartitionPolicy::exempt_accounts) && !slurm.accounts_enforced) {
    out.warnings.push_back(conf_mismatch(
        "exempt_accounts", enforce_text(slurm) +
                               ": Slurm does not check a job's account, so any user can claim an exempt one with -A; "
                               "set AccountingStorageEnforce=associations (or limits, qos, safe)"));
  }
  if (any_exempt(out.policy, &PartitionPolicy::exempt_qos) && !slurm.qos_enforced) {
    out.warnings.push_back(conf_mismatch(
        "exempt_qos", enforce_text(slurm) +
                          ": Slurm does not check a job's QOS against its association, so any user can claim an "
                          "exempt one with -q; set AccountingStorageEnforce=qos (with associations)"));
  }
  return out;
}

std::optional<uint32_t> passwd_uid(const std::string& name) {
  Result<uint32_t> uid = uid_of_user(name);  // grows its buffer on ERANGE (trainfit/util/passwd.h)
  return uid ? std::optional<uint32_t>(uid.value()) : std::nullopt;
}

}  // namespace trainfit::admission
