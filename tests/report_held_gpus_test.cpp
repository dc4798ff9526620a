// `trainfit report`: GPU-hours count the GPUs a job holds (the audit's gpus_held), which for
// an --exclusive job are its nodes' GPUs, not the ones it named. On 22.05.8
// `sbatch --exclusive --gres=gpu:h100:2` on a 64-GPU node runs with JOB_GRES=gpu:h100:64.
#include <gtest/gtest.h>

#include "report/aggregate.h"
#include "report/record.h"

namespace trainfit::cli::report {
namespace {

const char* kExclusiveRefusal =
    R"({"time":"2026-12-02T08:00:00Z","event":"submit","decision_id":"c1-9","action":"reject","reason":"too_few_gpus",)"
    R"("gpus_requested":2,"gpus_held":64,"time_limit_min":90,"min_gpus_to_fit":4})";

TEST(ReportHeldGpus, ReadsGpusHeldAndTheDecisionId) {
  const Result<Record> r = parse_record(kExclusiveRefusal);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->gpus_held, 64);
  EXPECT_EQ(r->gpus_requested, 2);
  EXPECT_EQ(r->decision_id, "c1-9");
  EXPECT_FALSE(parse_record(R"({"time":"2026-12-02T08:00:00Z","action":"reject","gpus_held":"all"})").ok());
}

TEST(ReportHeldGpus, GpuHoursCountWhatTheJobHolds) {
  Report report;
  Aggregator aggregator(&report);
  aggregator.add(parse_record(kExclusiveRefusal).value());
  // An older line without gpus_held: what it asked for.
  aggregator.add(parse_record(R"({"time":"2026-12-02T09:00:00Z","action":"reject","reason":"too_few_gpus",)"
                              R"("gpus_requested":8,"time_limit_min":30})")
                     .value());
  aggregator.finish(10);
  EXPECT_DOUBLE_EQ(report.rejected.gpu_hours, 64 * 1.5 + 8 * 0.5);
  EXPECT_EQ(report.rejected.gpus_requested, 2 + 8);  // what the jobs asked for, as before
}

}  // namespace
}  // namespace trainfit::cli::report
