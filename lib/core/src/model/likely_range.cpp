// The likely range beside every per-GPU figure: how far measured peaks fell from the predicted
// ones on the published suite, by the job's class (conf/likely_range.json, compiled in; derived
// leave-one-source-out by tests/published/ranges.py, docs/fidelity.md). Parsed once; estimate()
// then only looks a class up.
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../catalog/catalog_data.h"
#include "trainfit/estimate.h"

namespace trainfit {
namespace {

struct RangeTable {
  std::vector<LikelyRange> classes;  // most specific first, as the file lists them
};

// The file is the build's own (checked by the ranges_as_derived ctest): a malformed one is a
// build defect, and every figure then carries the pooled range of no class (1.0, 1.0).
RangeTable parse_table() {
  RangeTable table;
  const nlohmann::json doc = nlohmann::json::parse(catalog_data::kLikelyRangeJson, nullptr, false);
  if (!doc.is_object() || !doc.contains("classes") || !doc["classes"].is_array()) return table;
  for (const nlohmann::json& c : doc["classes"]) {
    LikelyRange r;
    const std::string adapter = c.value("adapter", "any");
    r.adapter = adapter == "full" ? "full" : adapter == "adapter" ? "adapter" : "any";
    const nlohmann::json sharded = c.value("sharded", nlohmann::json("any"));
    r.sharded = sharded.is_boolean() ? (sharded.get<bool>() ? "sharded" : "unsharded") : "any";
    r.low = c.value("low", 1.0);
    r.high = c.value("high", 1.0);
    r.cases = c.value("cases", 0);
    r.sources = c.value("sources", 0);
    table.classes.push_back(r);
  }
  return table;
}

const RangeTable& table() {
  static const RangeTable parsed = parse_table();
  return parsed;
}

bool matches(const char* want, const char* have) { return std::strcmp(want, "any") == 0 || std::strcmp(want, have) == 0; }

}  // namespace

const LikelyRange& likely_range_for(const Config& config, int64_t shard_group) {
  static const LikelyRange none;
  const char* adapter = config.adapter == Adapter::kNone ? "full" : "adapter";
  // ZeRO/FSDP over more than one rank (shard_group: the degree it would shard over); as ranges.py classes.
  const char* sharded = config.zero_stage > 0 && shard_group > 1 ? "sharded" : "unsharded";
  for (const LikelyRange& r : table().classes) {
    if (matches(r.adapter, adapter) && matches(r.sharded, sharded)) return r;
  }
  return none;
}

}  // namespace trainfit
