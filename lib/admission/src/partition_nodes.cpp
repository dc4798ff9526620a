// A partition's nodes seen from one job (partition_nodes.h). Node features and constraints
// as Slurm matches them: a feature is a word of the node's Features= (case-sensitive,
// src/slurmctld/node_scheduler.c, list_find_feature); "|" is OR and "&" is AND
// (sbatch(1), --constraint).
#include "partition_nodes.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

// A constraint this reader understands: its feature names, and whether one (|) or all (&) must hold.
struct SimpleConstraint {
  std::vector<std::string> features;
  bool any = true;
};

bool feature_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':' || c == '+';
}

std::optional<SimpleConstraint> simple_constraint(const std::string& text) {
  const bool has_or = text.find('|') != std::string::npos, has_and = text.find('&') != std::string::npos;
  if (text.empty() || (has_or && has_and)) return std::nullopt;
  SimpleConstraint out;
  out.any = !has_and;
  for (const std::string& name : split(text, has_and ? '&' : '|')) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), feature_char)) return std::nullopt;
    out.features.push_back(name);
  }
  return out;
}

bool has_feature(const NodeKind& kind, const std::string& feature) {
  return std::find(kind.features.begin(), kind.features.end(), feature) != kind.features.end();
}

bool satisfies(const NodeKind& kind, const SimpleConstraint& c) {
  const auto holds = [&](const std::string& f) { return has_feature(kind, f); };
  return c.any ? std::any_of(c.features.begin(), c.features.end(), holds)
               : std::all_of(c.features.begin(), c.features.end(), holds);
}

}  // namespace

int64_t NodeKind::gpus_each() const {
  int64_t total = 0;
  for (const NodeGpus& g : gpus) total += g.count;
  return total;
}

const std::vector<NodeKind>* partition_kinds(const Policy& policy, const std::string& partition) {
  const auto it = policy.partition_nodes.find(partition.empty() ? policy.default_partition : partition);
  return it == policy.partition_nodes.end() ? nullptr : &it->second;
}

std::vector<const NodeKind*> selected_kinds(const std::vector<NodeKind>& kinds, const std::string& constraint) {
  std::vector<const NodeKind*> all, chosen;
  const std::optional<SimpleConstraint> c = simple_constraint(constraint);
  for (const NodeKind& kind : kinds) {
    all.push_back(&kind);
    if (c && satisfies(kind, *c)) chosen.push_back(&kind);
  }
  return chosen.empty() ? all : chosen;
}

GpuNodes gpu_nodes(const std::vector<const NodeKind*>& kinds, const std::string& type) {
  GpuNodes out;
  for (const NodeKind* kind : kinds) {
    int64_t each = 0;
    for (const NodeGpus& g : kind->gpus) {
      if (type.empty() || lower(g.type) == lower(type)) each += g.count;
    }
    if (each == 0) continue;
    out.nodes += kind->nodes;
    out.gpus += each * kind->nodes;
  }
  return out;
}

std::vector<NodeKind> kinds_of(const std::vector<const SlurmNode*>& nodes) {
  std::vector<NodeKind> out;
  std::map<std::pair<std::vector<std::pair<std::string, int64_t>>, std::vector<std::string>>, size_t> index;
  for (const SlurmNode* node : nodes) {
    std::vector<std::pair<std::string, int64_t>> gpus;
    for (const NodeGpus& g : node->gpus) gpus.emplace_back(g.type, g.count);
    const auto [at, added] = index.emplace(std::make_pair(std::move(gpus), node->features), out.size());
    if (added) out.push_back({node->gpus, node->features, 0});
    ++out[at->second].nodes;
  }
  return out;
}

}  // namespace trainfit::admission
