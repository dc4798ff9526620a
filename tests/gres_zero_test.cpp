// GPU entries with an explicit zero count: Slurm ignores them (src/common/gres.c,
// _get_next_job_gres at slurm-22-05-8-1), so they neither cancel an earlier count of their type
// nor make a request typed or untyped. Expected counts are what slurmctld 22.05 allocated
// (scontrol show job -d, JOB_GRES) to these requests.
#include <gtest/gtest.h>

#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

TEST(GresZero, AZeroCountEntryIsIgnoredAsSlurmIgnoresIt) {
  struct Case {
    const char* text;
    int64_t allocated;
  };
  for (const Case& c : {Case{"gres:gpu:h100:5,gres:gpu:h100:0", 5},  // measured: JOB_GRES=gpu:h100:5
                        Case{"gres:gpu:h100:5,gres:gpu:H100:0", 5},  // measured: JOB_GRES=gpu:h100:5
                        Case{"gres:gpu:h100:0,gres:gpu:h100:5", 5}, Case{"gres:gpu:h100:0", 0},
                        Case{"gres/gpu:h100=5,gres/gpu:h100=0", 5}}) {
    Result<TresList> list = parse_tres(c.text);
    ASSERT_TRUE(list.ok()) << c.text << ": " << list.error().message;
    EXPECT_EQ(list->gpus, c.allocated) << c.text;
  }
  Result<TresList> mixed = parse_tres("gres:gpu:0,gres:gpu:h100:4");  // the untyped zero is not a request
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  EXPECT_EQ(mixed->gpus, 4);
  EXPECT_FALSE(mixed->untyped);
}

// The hole it closed: a GPU job without an annotation in a require_annotation partition, its
// GPUs cancelled by a zero entry in the gate's eyes only.
TEST(GresZero, AZeroEntryDoesNotHideGpusFromRequireAnnotation) {
  const Policy policy = parse_policy("partition.strict.require_annotation = true\n").value();
  for (const char* text : {"gres:gpu:h100:5,gres:gpu:h100:0", "gres:gpu:h100:5,gres:gpu:H100:0"}) {
    Job job;
    job.partition = "strict";
    job.fields.per_job = text;
    const Decision d = decide(policy, job);
    EXPECT_EQ(d.verdict, Verdict::kReject) << text;
    EXPECT_EQ(d.reason, Reason::kAnnotationRequired) << text;
  }
  Job per_node;  // --gpus-per-node=h100:4,H100:0 (measured: JOB_GRES=gpu:h100:4)
  per_node.partition = "strict";
  per_node.fields.per_node = "gres:gpu:h100:4,gres:gpu:H100:0";
  EXPECT_EQ(decide(policy, per_node).reason, Reason::kAnnotationRequired);
}

}  // namespace
}  // namespace trainfit::admission
