// The partitions slurm.conf defines, as slurmctld reads them (src/common/read_config.c,
// parse_config.c): one "PartitionName=NAME Key=Value ..." line each, keys case-insensitive,
// names case-sensitive, "PartitionName=DEFAULT" setting what the lines after it inherit,
// a trailing backslash continuing a line, "#" starting a comment. Read off the job path:
// at the policy's load, by the watcher thread, and by check-config.
#include <cstdlib>

#include "../text.h"
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

// OverSubscribe=EXCLUSIVE (Shared= before 15.08): every job gets its nodes whole.
bool exclusive_value(const std::string& value) { return lower(value).rfind("exclusive", 0) == 0; }

}  // namespace

std::vector<SlurmPartition> slurm_partitions(const std::string& text) {
  std::vector<SlurmPartition> out;
  bool default_exclusive = false;
  for (const std::string& line : logical_lines(text)) {
    const auto words = words_of(line);
    if (words.empty() || words.front().first != "partitionname") continue;
    const std::string name = words.front().second;
    bool exclusive = default_exclusive;
    for (const auto& [key, value] : words) {
      if (key == "oversubscribe" || key == "shared") exclusive = exclusive_value(value);
    }
    if (lower(name) == "default") {
      default_exclusive = exclusive;
      continue;
    }
    out.push_back({name, exclusive});
  }
  return out;
}

std::string slurm_conf_path() {
  const char* env = std::getenv("SLURM_CONF");
  return env != nullptr && env[0] != '\0' ? env : "/etc/slurm/slurm.conf";
}

}  // namespace trainfit::admission
