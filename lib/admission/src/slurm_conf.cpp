// The partitions slurm.conf defines, as slurmctld reads them (src/common/read_config.c,
// parse_config.c): one "PartitionName=NAME Key=Value ..." line each, keys case-insensitive,
// names case-sensitive, "PartitionName=DEFAULT" setting what the lines after it inherit,
// a trailing backslash continuing a line, "#" starting a comment. Read off the job path:
// at the policy's load, by the watcher thread, and by check-config.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "slurm_conf_lines.h"
#include "trainfit/admission.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

// Hosts in one hostlist expression as slurm.conf writes them (src/common/hostlist.c):
// "n[1-8],gpu[01-04,07],login1"; brackets multiply ("r[1-2]n[1-4]" is 8). Overlaps are
// counted twice (a cap too loose, never too tight). 0 when it is not one this reader counts.
int64_t hostlist_count(const std::string& expression) {
  constexpr int64_t kMost = int64_t{1} << 24;
  int64_t total = 0, item = 1;
  bool item_open = false;
  for (size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == ',') {
      if (item_open) total += item;
      item = 1;
      item_open = false;
    } else if (c == '[') {
      const size_t close = expression.find(']', i);
      if (close == std::string::npos) return 0;
      int64_t in_brackets = 0;
      for (const std::string& part : split(expression.substr(i + 1, close - i - 1), ',')) {
        const size_t dash = part.find('-');
        char* end = nullptr;
        const long long first = std::strtoll(part.c_str(), &end, 10);
        if (end == part.c_str() || (dash == std::string::npos ? *end != '\0' : end != part.c_str() + dash)) return 0;
        long long last = first;
        if (dash != std::string::npos) {
          const char* from = part.c_str() + dash + 1;
          last = std::strtoll(from, &end, 10);
          if (end == from || *end != '\0' || last < first) return 0;
        }
        in_brackets += last - first + 1;
        if (in_brackets > kMost) return 0;
      }
      item *= in_brackets;
      if (item > kMost) return 0;
      item_open = true;
      i = close;
    } else if (c == ']' || c == ' ') {
      return 0;
    } else {
      item_open = true;
    }
    if (total > kMost) return 0;
  }
  return total;
}

// OverSubscribe=EXCLUSIVE (Shared= before 15.08): every job gets its nodes whole.
bool exclusive_value(const std::string& value) { return lower(value).rfind("exclusive", 0) == 0; }

// NodeSet= lines a partition's Nodes= may name: their nodes, by a single Feature= or by Nodes=
// (read_config.c, _parse_nodeset); nullopt where this reader does not expand them.
std::map<std::string, std::optional<std::vector<std::string>>> node_sets(const std::vector<std::string>& lines,
                                                                          const SlurmNodes& nodes) {
  std::map<std::string, std::optional<std::vector<std::string>>> out;
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (words.empty() || words.front().first != "nodeset") continue;
    std::optional<std::vector<std::string>>& set = out[words.front().second];
    set.reset();
    for (const auto& [key, value] : words) {
      if (key == "nodes") {
        std::vector<std::string> names = expand_hostlist(value, kMaxSlurmNodes);
        if (!names.empty()) set = std::move(names);
      }
      const bool simple_feature = !value.empty() && value.find_first_of("&|,*![]()") == std::string::npos;
      if (key == "feature" && simple_feature && nodes.complete) {
        std::vector<std::string> names;
        for (const SlurmNode& node : nodes.nodes) {
          if (std::find(node.features.begin(), node.features.end(), value) != node.features.end()) names.push_back(node.name);
        }
        set = std::move(names);
      }
    }
  }
  return out;
}

// A partition's Nodes= as node names, each a node slurm.conf defines; nullopt when not known.
// `defined`: the names of slurm.conf's nodes (built once for every partition).
std::optional<std::vector<std::string>> partition_nodes(
    const std::string& spec, const SlurmNodes& nodes, const std::set<std::string>& defined,
    const std::map<std::string, std::optional<std::vector<std::string>>>& sets) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (defined.count(name) == 0) return false;  // a node slurm.conf does not define
      if (seen.insert(name).second) out.push_back(name);
    }
    return true;
  };
  for (const std::string& item : hostlist_items(spec)) {
    if (item.empty()) continue;
    const auto set = sets.find(item);
    if (item == "ALL" || set != sets.end()) {
      if (item == "ALL" && !nodes.complete) return std::nullopt;
      if (set != sets.end() && !set->second) return std::nullopt;
      std::vector<std::string> names;
      if (item == "ALL") for (const SlurmNode& node : nodes.nodes) names.push_back(node.name);
      if (!add(item == "ALL" ? names : *set->second)) return std::nullopt;
      continue;
    }
    const std::vector<std::string> names = expand_hostlist(item, kMaxSlurmNodes);
    if (names.empty() || !add(names)) return std::nullopt;
  }
  return out;
}

// A boolean as src/common/parse_value.c (s_p_handle_boolean) reads it: yes, up, true, 1.
bool slurm_true(const std::string& value) {
  const std::string v = lower(value);
  return v == "yes" || v == "up" || v == "true" || v == "1";
}

// One partition line's settings (a DEFAULT line's carried over).
struct PartitionLine {
  bool exclusive = false, is_default = false;
  std::string nodes;
  int64_t max_nodes = 0;  // 0: UNLIMITED
};

std::vector<SlurmPartition> partitions_of(const std::vector<std::string>& lines, const SlurmNodes& nodes) {
  // Nodes=ALL is every NodeName= line's hosts; a NodeSet's name is not counted here.
  int64_t all_nodes = 0;
  std::set<std::string> set_names;
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (words.empty()) continue;
    if (words.front().first == "nodename" && lower(words.front().second) != "default") {
      const int64_t count = hostlist_count(words.front().second);
      all_nodes = count > 0 && all_nodes >= 0 ? all_nodes + count : -1;  // -1: not counted
    }
    if (words.front().first == "nodeset") set_names.insert(words.front().second);
  }
  auto node_count = [&](const std::string& spec) -> int64_t {
    if (spec == "ALL") return std::max<int64_t>(0, all_nodes);
    for (const std::string& item : split(spec, ',')) {
      if (set_names.count(item) > 0) return 0;
    }
    return hostlist_count(spec);
  };
  const auto sets = node_sets(lines, nodes);
  std::set<std::string> defined;
  for (const SlurmNode& node : nodes.nodes) defined.insert(node.name);
  std::vector<SlurmPartition> out;
  PartitionLine defaults;
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (words.empty() || words.front().first != "partitionname") continue;
    const std::string name = words.front().second;
    PartitionLine p = defaults;
    for (const auto& [key, value] : words) {
      if (key == "oversubscribe" || key == "shared") p.exclusive = exclusive_value(value);
      if (key == "nodes") p.nodes = value;
      if (key == "default") p.is_default = slurm_true(value);
      if (key == "maxnodes") p.max_nodes = lower(value) == "unlimited" ? 0 : std::max(0LL, std::atoll(value.c_str()));
    }
    if (lower(name) == "default") {
      defaults = p;
      continue;
    }
    int64_t most = p.nodes.empty() ? 0 : node_count(p.nodes);
    if (p.max_nodes > 0 && (most == 0 || p.max_nodes < most)) most = p.max_nodes;
    SlurmPartition partition{name, p.exclusive, p.is_default, most, std::nullopt};
    if (!p.nodes.empty()) partition.nodes = partition_nodes(p.nodes, nodes, defined, sets);
    out.push_back(std::move(partition));
  }
  return out;
}

// AccountingStorageEnforce's words that check a job's account (read_config.c,
// _validate_accounting_storage_enforce; doc/man/man5/slurm.conf.5: "If limits, qos, or
// wckeys are set, associations will automatically be set", safe sets limits too).
bool enforces_any(const std::string& value, const std::set<std::string>& words) {
  for (const std::string& word : split(value, ',')) {
    if (words.count(lower(trim(word))) > 0) return true;
  }
  return false;
}
bool enforces_accounts(const std::string& value) {
  return enforces_any(value, {"1", "2", "associations", "limits", "qos", "safe", "wckeys", "all"});
}
// Only "qos" (and "all") make slurmctld refuse a QOS the job's association does not allow
// (slurm.conf.5: "qos - This will require all jobs to specify ... a valid qos").
bool enforces_qos(const std::string& value) { return enforces_any(value, {"qos", "all"}); }

}  // namespace

std::vector<SlurmPartition> slurm_partitions(const std::string& text) {
  return partitions_of(logical_lines(text), slurm_nodes(text));
}

SlurmConf read_slurm_conf(const std::string& text) {
  SlurmConf conf;
  const std::vector<std::string> lines = logical_lines(text);
  conf.nodes = slurm_nodes(text);
  conf.partitions = partitions_of(lines, conf.nodes);
  for (const SlurmPartition& p : conf.partitions) {
    if (p.is_default) conf.default_partition = p.name;  // src/slurmctld/read_config.c: the last one wins
  }
  for (const std::string& line : lines) {
    for (const auto& [key, value] : words_of(line)) {
      if (key == "accountingstorageenforce") conf.accounting_enforce = value;
    }
  }
  conf.accounts_enforced = enforces_accounts(conf.accounting_enforce);
  conf.qos_enforced = enforces_qos(conf.accounting_enforce);
  return conf;
}

std::string slurm_conf_path() {
  const char* env = std::getenv("SLURM_CONF");
  return env != nullptr && env[0] != '\0' ? env : "/etc/slurm/slurm.conf";
}

}  // namespace trainfit::admission
