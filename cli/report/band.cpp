// The uncertain band in an audit log, judged under a trainfit.conf's refuse_when.
#include "band.h"

#include "aggregate.h"
#include "record.h"
#include "source.h"
#include "trainfit/util/text.h"

namespace trainfit::cli::report {
namespace {

// The rules a record's job was held to: its first listed partition's (a job listing several is
// held to each; the first stands for them here).
const admission::PartitionPolicy& rules_of(const Record& r, const admission::Policy& policy) {
  const std::vector<std::string> parts = split(r.partition, ',');
  return policy.for_partition(parts.empty() ? std::string() : trim(parts.front()));
}

// refuse_when=likely refuses a band job whose point figure is past the usable HBM; certain none.
bool refused_under(const Record& r, const admission::PartitionPolicy& rules) {
  return rules.refuse_when == admission::RefuseWhen::kLikely && r.predicted_gb && *r.predicted_gb > *r.capacity_gb;
}

}  // namespace

Result<BandCount> count_band(const std::string& path, const admission::Policy& policy) {
  BandCount count;
  LineSink sink;
  sink.line = [&](int64_t, const std::string& text) {
    Result<Record> r = parse_record(text);
    if (!r || !is_check(r->action) || !r->likely_high_gb || *r->likely_high_gb <= 0) return;
    ++count.checked;
    if (!is_uncertain(*r)) return;
    ++count.uncertain;
    if (refused_under(*r, rules_of(*r, policy))) ++count.refused;
  };
  sink.oversize = [](int64_t) {};
  Result<ReadEnd> read = for_each_line(path, kMaxLineBytes, sink);
  if (!read) return read.error();
  return count;
}

}  // namespace trainfit::cli::report
