// `trainfit report`'s numbers from records the test builds, each expected value worked out
// from those records (docs/report.md defines them).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "report/aggregate.h"
#include "report/record.h"

namespace trainfit::cli::report {
namespace {

// One audit record; what a test does not set is empty or none.
Record record(Action action, const std::string& user, int64_t gpus) {
  Record r;
  r.action = action;
  r.user = user;
  r.gpus_requested = gpus;
  r.model = "llama3-8b";
  return r;
}

Record oom(Action action, const std::string& user, int64_t gpus, std::optional<int64_t> min_gpus,
           std::optional<int64_t> time_limit_min) {
  Record r = record(action, user, gpus);
  r.reason = oom_reason();
  r.min_gpus = min_gpus;
  r.time_limit_min = time_limit_min;
  return r;
}

size_t dimension(Dimension d) {
  for (size_t i = 0; i < std::size(kDimensions); ++i) {
    if (kDimensions[i] == d) return i;
  }
  ADD_FAILURE() << "no dimension " << to_string(d);
  return 0;
}

Report aggregate(const std::vector<Record>& records, size_t top = 10) {
  Report report;
  Aggregator aggregator(&report);
  for (const Record& r : records) aggregator.add(r);
  aggregator.finish(top);
  return report;
}

TEST(ReportAggregate, CountsByAction) {
  const std::vector<Record> records = {record(Action::kAccept, "alice", 8), record(Action::kAccept, "bob", 4),
                                       oom(Action::kReject, "alice", 8, 16, 120), record(Action::kExempt, "carol", 2),
                                       record(Action::kUnchecked, "carol", 1), oom(Action::kWarn, "bob", 4, 6, {})};
  const Report report = aggregate(records);
  EXPECT_EQ(report.totals.records, 6);
  EXPECT_EQ(report.totals.of(Action::kAccept), 2);
  EXPECT_EQ(report.totals.of(Action::kReject), 1);
  EXPECT_EQ(report.totals.of(Action::kWarn), 1);
  EXPECT_EQ(report.totals.of(Action::kResize), 0);
  EXPECT_EQ(report.totals.of(Action::kExempt), 1);
  EXPECT_EQ(report.totals.of(Action::kUnchecked), 1);
  EXPECT_EQ(report.totals.checked(), 6 - 1 - 1);  // exempt and unchecked are not checks
  EXPECT_EQ(report.totals.oom, 2);                // the reject and the warn, both too_few_gpus
}

TEST(ReportAggregate, BreakdownsKeyEmptyFieldsAsNone) {
  Record alice = record(Action::kAccept, "alice", 8);
  alice.account = "physics";
  alice.partition = "gpu";
  alice.gpu = "h100";
  const Record nobody = record(Action::kReject, "", 4);  // no user, account, partition or GPU
  const Report report = aggregate({alice, alice, nobody});

  const auto& users = report.by[dimension(Dimension::kUser)];
  EXPECT_EQ(users.at("alice").records, 2);
  EXPECT_EQ(users.at("(none)").records, 1);
  EXPECT_EQ(users.at("(none)").of(Action::kReject), 1);
  EXPECT_EQ(users.size(), 2u);
  EXPECT_EQ(report.by[dimension(Dimension::kAccount)].at("physics").records, 2);
  EXPECT_EQ(report.by[dimension(Dimension::kAccount)].at("(none)").records, 1);
  EXPECT_EQ(report.by[dimension(Dimension::kPartition)].at("gpu").records, 2);
  EXPECT_EQ(report.by[dimension(Dimension::kPartition)].at("(default)").records, 1);  // the cluster's default
  EXPECT_EQ(report.by[dimension(Dimension::kGpu)].at("h100").records, 2);
  EXPECT_EQ(report.by[dimension(Dimension::kModel)].at("llama3-8b").records, 3);
}

TEST(ReportAggregate, OomGpusAndGpuHours) {
  constexpr int64_t kGpusA = 8, kNeedA = 16, kMinutesA = 120;
  constexpr int64_t kGpusB = 4, kMinutesB = 45;
  constexpr int64_t kGpusC = 2, kNeedC = 3;
  constexpr int64_t kGpusW = 16, kNeedW = 24, kMinutesW = 30;
  const std::vector<Record> records = {
      oom(Action::kReject, "alice", kGpusA, kNeedA, kMinutesA),
      oom(Action::kReject, "bob", kGpusB, std::nullopt, kMinutesB),  // no GPU count fits
      oom(Action::kReject, "carol", kGpusC, kNeedC, std::nullopt),   // no --time: no GPU-hours
      oom(Action::kWarn, "dave", kGpusW, kNeedW, kMinutesW),
      record(Action::kReject, "erin", 64),  // refused for another reason: not OOM
  };
  const Report report = aggregate(records);

  EXPECT_EQ(report.rejected.jobs, 3);
  EXPECT_EQ(report.rejected.gpus_requested, kGpusA + kGpusB + kGpusC);
  EXPECT_EQ(report.rejected.gpus_needed, kNeedA + kNeedC);
  EXPECT_EQ(report.rejected.no_fit, 1);
  EXPECT_EQ(report.rejected.with_time_limit, 2);
  EXPECT_DOUBLE_EQ(report.rejected.gpu_hours, (kGpusA * kMinutesA + kGpusB * kMinutesB) / 60.0);

  EXPECT_EQ(report.warned.jobs, 1);
  EXPECT_EQ(report.warned.gpus_requested, kGpusW);
  EXPECT_EQ(report.warned.gpus_needed, kNeedW);
  EXPECT_EQ(report.warned.no_fit, 0);
  EXPECT_DOUBLE_EQ(report.warned.gpu_hours, kGpusW * kMinutesW / 60.0);
}

TEST(ReportAggregate, ResizesCountTheGpusAdded) {
  Record small = record(Action::kResize, "alice", 4);
  small.resized_to = 8;
  Record large = record(Action::kResize, "bob", 16);
  large.resized_to = 32;
  const Record unknown = record(Action::kResize, "carol", 2);  // no resized_to: not counted as a resize
  const Report report = aggregate({small, large, unknown});
  EXPECT_EQ(report.resized, 2);
  EXPECT_EQ(report.gpus_added_by_resize, (8 - 4) + (32 - 16));
  EXPECT_EQ(report.totals.of(Action::kResize), 3);
}

TEST(ReportAggregate, TopOomConfigsMostFrequentFirst) {
  Record a = oom(Action::kReject, "alice", 8, 16, {});
  a.config = "seq_length=8192";
  Record a_warned = oom(Action::kWarn, "bob", 8, 12, {});
  a_warned.config = a.config;  // the same configuration, on the same GPUs
  Record b = oom(Action::kReject, "carol", 4, 6, {});
  b.config = "seq_length=4096";
  Record c = oom(Action::kReject, "dave", 2, {}, {});
  c.config = "seq_length=2048";
  const Report report = aggregate({b, a, a_warned, c, a}, /*top=*/2);

  ASSERT_EQ(report.top_oom_configs.size(), 2u);  // three configurations, the top two kept
  const OomConfig& first = report.top_oom_configs[0];
  EXPECT_EQ(first.config, a.config);
  EXPECT_EQ(first.gpus, a.gpus_requested);
  EXPECT_EQ(first.count, 3);
  EXPECT_EQ(first.rejected, 2);
  EXPECT_EQ(first.warned, 1);
  EXPECT_EQ(first.min_gpus.value_or(-1), std::max(*a.min_gpus, *a_warned.min_gpus));
  // b and c once each: the tie kept in key order, "seq_length=2048" before "seq_length=4096".
  EXPECT_EQ(report.top_oom_configs[1].config, c.config);
  EXPECT_EQ(report.top_oom_configs[1].count, 1);
  EXPECT_FALSE(report.top_oom_configs[1].min_gpus.has_value());
}

TEST(ReportAggregate, TopAdviceCountsEachChange) {
  const std::vector<Change> recompute = {{"recompute", "full"}};
  const std::vector<Change> more_gpus = {{"num_gpus", "16"}, {"tp", "2"}};
  Record r1 = oom(Action::kReject, "alice", 8, 16, {});
  r1.advice = recompute;
  Record r2 = r1;
  Record r3 = oom(Action::kWarn, "bob", 8, 16, {});
  r3.advice = more_gpus;
  const Report report = aggregate({r3, r1, r2, record(Action::kAccept, "carol", 1)});
  ASSERT_EQ(report.top_advice.size(), 2u);
  EXPECT_EQ(report.top_advice[0].advice, key_values(recompute));
  EXPECT_EQ(report.top_advice[0].count, 2);
  EXPECT_EQ(report.top_advice[1].advice, key_values(more_gpus));
  EXPECT_EQ(report.top_advice[1].count, 1);
}

TEST(ReportAggregate, HostRamAgainstTheMemoryRequest) {
  Record over = record(Action::kAccept, "alice", 16);
  over.host_ram_per_node_gb = 131.3;
  over.mem_per_node_gb = 64;  // asked for less than the offload needs: counted
  Record whole = record(Action::kAccept, "bob", 8);
  whole.host_ram_per_node_gb = 65.6;  // no memory request: the node's whole memory
  Record enough = record(Action::kReject, "carol", 8);
  enough.host_ram_per_node_gb = 40;
  enough.mem_per_node_gb = 40;  // exactly enough
  const Report report = aggregate({over, whole, enough, record(Action::kAccept, "dave", 8)});
  EXPECT_EQ(report.host_ram.jobs, 3);
  EXPECT_EQ(report.host_ram.over_memory_request, 1);
  EXPECT_DOUBLE_EQ(report.host_ram.largest_per_node_gb, 131.3);
}

}  // namespace
}  // namespace trainfit::cli::report
