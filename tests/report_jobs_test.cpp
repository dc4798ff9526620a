// `trainfit report --jobs`: one job line as sacct -P and squeue -O print it. The lines are
// what squeue printed on the loopback cluster (22.05.8) for a job that ran, one Slurm refused
// after trainfit admitted it (sbatch --mem=600G on a 512000 MB node: "Requested node
// configuration is not available"), one that failed in its script, and one without a stamp.
#include <gtest/gtest.h>

#include "report/jobs.h"

namespace trainfit::cli::report {
namespace {

TEST(ReportJobs, ReadsTheDecisionAndWhetherSlurmRefusedTheJob) {
  const Result<JobLine> ran = parse_job_line("COMPLETED|None|trainfit accept: 71.1 of 79.6 GiB per GPU on 4 x h100; decision 6b1695dc-2|");
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(ran->decision_id, "6b1695dc-2");
  EXPECT_FALSE(ran->refused_by_slurm);
  const Result<JobLine> refused =
      parse_job_line("FAILED                        |BadConstraints                |trainfit accept: 71.1 of 79.6 GiB per GPU "
                     "on 4 x h100; decision 6b1695dc-1         ");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->decision_id, "6b1695dc-1");
  EXPECT_TRUE(refused->refused_by_slurm);
  const Result<JobLine> failed = parse_job_line("FAILED|NonZeroExitCode|trainfit accept: 1.0 of 79.6 GiB per GPU on 4 x h100; decision 6b1695dc-3");
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(failed->refused_by_slurm);  // it ran: its GPUs were held
  const Result<JobLine> none = parse_job_line("PENDING|JobHeldUser|(null)|");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->decision_id, "");
}

TEST(ReportJobs, ALineWithoutThreeColumnsIsNamed) {
  const Result<JobLine> bad = parse_job_line("trainfit accept: 1.0 of 79.6 GiB per GPU on 4 x h100; decision 6b-1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "not STATE|REASON|ADMINCOMMENT");
}

}  // namespace
}  // namespace trainfit::cli::report
