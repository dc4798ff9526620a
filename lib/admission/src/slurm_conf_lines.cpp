// slurm.conf's line syntax (slurm_conf_lines.h).
#include "slurm_conf_lines.h"

#include <cstdlib>

#include "trainfit/util/text.h"

namespace trainfit::admission {

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

namespace {

// One bracket's ranges ("1-3,07"): the numbers as written (width kept for zero padding).
bool bracket_values(const std::string& inside, size_t most, std::vector<std::string>* out) {
  for (const std::string& part : split(inside, ',')) {
    const size_t dash = part.find('-');
    const std::string first = part.substr(0, dash), last = dash == std::string::npos ? first : part.substr(dash + 1);
    if (first.empty() || last.empty() || first.find_first_not_of("0123456789") != std::string::npos ||
        last.find_first_not_of("0123456789") != std::string::npos || first.size() > 9 || last.size() > 9) {
      return false;
    }
    const long from = std::atol(first.c_str()), to = std::atol(last.c_str());
    if (to < from || static_cast<size_t>(to - from) >= most || out->size() + static_cast<size_t>(to - from) >= most) return false;
    for (long n = from; n <= to; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < first.size()) digits.insert(0, first.size() - digits.size(), '0');  // "07"
      out->push_back(digits);
    }
  }
  return true;
}

// One comma-free item ("r[1-2]n[01-04]"): every combination, in order.
bool expand_item(const std::string& item, size_t most, std::vector<std::string>* hosts) {
  std::vector<std::string> names = {""};
  size_t i = 0;
  while (i < item.size()) {
    const size_t open = item.find('[', i);
    const std::string literal = item.substr(i, open == std::string::npos ? std::string::npos : open - i);
    if (literal.find(']') != std::string::npos) return false;
    for (std::string& name : names) name += literal;
    if (open == std::string::npos) break;
    const size_t close = item.find(']', open);
    if (close == std::string::npos) return false;
    std::vector<std::string> values;
    if (!bracket_values(item.substr(open + 1, close - open - 1), most, &values)) return false;
    if (names.size() * values.size() + hosts->size() > most) return false;
    std::vector<std::string> grown;
    grown.reserve(names.size() * values.size());
    for (const std::string& name : names) {
      for (const std::string& value : values) grown.push_back(name + value);
    }
    names = std::move(grown);
    i = close + 1;
  }
  if (names.front().empty()) return false;
  hosts->insert(hosts->end(), names.begin(), names.end());
  return hosts->size() <= most;
}

}  // namespace

std::vector<std::string> hostlist_items(const std::string& expression) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char c : expression) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(current);
  return items;
}

std::vector<std::string> expand_hostlist(const std::string& expression, size_t most) {
  std::vector<std::string> hosts;
  if (expression.find_first_of(" \t") != std::string::npos) return {};
  for (const std::string& item : hostlist_items(expression)) {
    if (item.empty()) continue;
    if (!expand_item(item, most, &hosts)) return {};
  }
  return hosts;
}

}  // namespace trainfit::admission
