// The nodes slurm.conf defines, as slurmctld reads them (src/common/read_config.c,
// _parse_nodename): "NodeName=HOSTLIST Key=Value ...", a key a line leaves out taken from
// the NodeName=DEFAULT lines before it; Features= and Feature= are the same key.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "slurm_conf_lines.h"
#include "trainfit/admission.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

constexpr std::string_view kGpu = "gpu";

// src/common/gres.c's suffix_mult: K, M, G, T, P as powers of 1024; 0 for anything else.
int64_t suffix_multiplier(const std::string& suffix) {
  if (suffix.empty()) return 1;
  if (suffix.size() != 1) return 0;
  const std::string units = "kmgtp";
  const size_t at = units.find(static_cast<char>(std::tolower(static_cast<unsigned char>(suffix[0]))));
  return at == std::string::npos ? 0 : int64_t{1} << (10 * (at + 1));
}

}  // namespace

int64_t SlurmNode::gpu_count() const {
  int64_t total = 0;
  for (const NodeGpus& g : gpus) total += g.count;
  return total;
}

std::vector<NodeGpus> node_gpus(const std::string& gres) {
  std::vector<NodeGpus> out;
  for (std::string entry : split(gres, ',')) {
    entry = trim(entry);
    if (entry == kGpu) {  // gres.c stops at a bare name: one GPU
      out.push_back({"", 1});
      break;
    }
    if (entry.rfind(std::string(kGpu) + ":", 0) != 0) continue;
    entry.resize(std::min(entry.size(), entry.rfind('(')));  // socket binding
    std::vector<std::string> parts = split(entry, ':');
    int64_t count = 1;  // "gpu:tesla": one
    const std::string& last = parts.back();
    if (!last.empty() && std::isdigit(static_cast<unsigned char>(last[0]))) {
      char* end = nullptr;
      const long long n = std::strtoll(last.c_str(), &end, 10);
      const int64_t mult = suffix_multiplier(end);
      if (mult == 0 || n < 0) break;  // gres.c: "Bad GRES configuration", the rest not read
      count = n * mult;
      parts.pop_back();
    }
    std::string type;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (lower(parts[i]) != "no_consume" && type.empty()) type = parts[i];
    }
    // The same type named twice is one entry with both counts (gres.c, gres_add_type).
    auto same = std::find_if(out.begin(), out.end(), [&](const NodeGpus& g) { return g.type == type; });
    if (same != out.end()) same->count += count;
    else out.push_back({type, count});
  }
  return out;
}

SlurmNodes slurm_nodes(const std::string& text) {
  SlurmNodes out;
  std::string default_gres, default_features;
  for (const std::string& line : logical_lines(text)) {
    const auto words = words_of(line);
    if (words.empty() || words.front().first != "nodename") continue;
    std::string gres = default_gres, features = default_features;
    for (const auto& [key, value] : words) {
      if (key == "gres") gres = value;
      if (key == "features" || key == "feature") features = value;
    }
    if (lower(words.front().second) == "default") {
      default_gres = gres;
      default_features = features;
      continue;
    }
    const std::vector<std::string> names = expand_hostlist(words.front().second, kMaxSlurmNodes - out.nodes.size());
    if (names.empty()) {
      out.complete = false;
      continue;
    }
    SlurmNode node;
    node.gpus = node_gpus(gres);
    for (const std::string& f : split(features, ',')) {
      if (!trim(f).empty()) node.features.push_back(trim(f));
    }
    for (const std::string& name : names) {
      node.name = name;
      out.nodes.push_back(node);
    }
  }
  return out;
}

}  // namespace trainfit::admission
