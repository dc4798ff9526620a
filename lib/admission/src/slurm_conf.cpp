// The partitions slurm.conf defines, as slurmctld reads them (src/common/read_config.c,
// parse_config.c): one "PartitionName=NAME Key=Value ..." line each, keys case-insensitive,
// names case-sensitive, "PartitionName=DEFAULT" setting what the lines after it inherit,
// a trailing backslash continuing a line, "#" starting a comment. Read off the job path:
// at the policy's load, by the watcher thread, and by check-config.
#include <algorithm>
#include <cstdlib>
#include <set>

#include "trainfit/util/text.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

// Lines with their continuations joined and comments dropped.
std::vector<std::string> logical_lines(const std::string& text) {
  std::vector<std::string> out;
  std::string pending;
  for (std::string line : split(text, '\n')) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const bool continued = !trim(line).empty() && trim(line).back() == '\\';
    if (continued) line = trim(line).substr(0, trim(line).size() - 1);
    pending += " " + line;
    if (continued) continue;
    out.push_back(pending);
    pending.clear();
  }
  if (!pending.empty()) out.push_back(pending);
  return out;
}

// "Key=Value" words of a line (a quoted value keeps its spaces).
std::vector<std::pair<std::string, std::string>> words_of(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    bool quoted = false;
    while (i < line.size() && (quoted || (line[i] != ' ' && line[i] != '\t' && line[i] != '\r'))) {
      if (line[i] == '"') quoted = !quoted;
      ++i;
    }
    const std::string word = line.substr(start, i - start);
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    std::string value = word.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    out.emplace_back(lower(word.substr(0, eq)), value);
  }
  return out;
}

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

}  // namespace

std::vector<SlurmPartition> slurm_partitions(const std::string& text) {
  const std::vector<std::string> lines = logical_lines(text);
  // Nodes=ALL is every NodeName= line's hosts; a NodeSet's name is not counted here.
  int64_t all_nodes = 0;
  std::set<std::string> node_sets;
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (words.empty()) continue;
    if (words.front().first == "nodename" && lower(words.front().second) != "default") {
      const int64_t count = hostlist_count(words.front().second);
      all_nodes = count > 0 && all_nodes >= 0 ? all_nodes + count : -1;  // -1: not counted
    }
    if (words.front().first == "nodeset") node_sets.insert(words.front().second);
  }
  auto node_count = [&](const std::string& nodes) -> int64_t {
    if (nodes == "ALL") return std::max<int64_t>(0, all_nodes);
    for (const std::string& item : split(nodes, ',')) {
      if (node_sets.count(item) > 0) return 0;
    }
    return hostlist_count(nodes);
  };
  std::vector<SlurmPartition> out;
  bool default_exclusive = false;
  std::string default_nodes;
  int64_t default_max_nodes = 0;  // 0: UNLIMITED
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (words.empty() || words.front().first != "partitionname") continue;
    const std::string name = words.front().second;
    bool exclusive = default_exclusive;
    std::string nodes = default_nodes;
    int64_t max_nodes = default_max_nodes;
    for (const auto& [key, value] : words) {
      if (key == "oversubscribe" || key == "shared") exclusive = exclusive_value(value);
      if (key == "nodes") nodes = value;
      if (key == "maxnodes") max_nodes = lower(value) == "unlimited" ? 0 : std::max(0LL, std::atoll(value.c_str()));
    }
    if (lower(name) == "default") {
      default_exclusive = exclusive;
      default_nodes = nodes;
      default_max_nodes = max_nodes;
      continue;
    }
    int64_t most = nodes.empty() ? 0 : node_count(nodes);
    if (max_nodes > 0 && (most == 0 || max_nodes < most)) most = max_nodes;
    out.push_back({name, exclusive, most});
  }
  return out;
}

std::string slurm_conf_path() {
  const char* env = std::getenv("SLURM_CONF");
  return env != nullptr && env[0] != '\0' ? env : "/etc/slurm/slurm.conf";
}

}  // namespace trainfit::admission
