// Updates (scontrol update -> job_modify): what an update carries is checked.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <vector>
#include <nlohmann/json.hpp>

#include "result_matchers.h"
#include "test_util.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/util/file.h"
#include "trainfit/util/text.h"
#include "admission_helpers.h"

namespace trainfit::admission {
namespace {

using testing::failure_of;

// ---- Updates (job_modify) ----

TEST(Update, WhatAnUpdateCarriesIsChecked) {
  const Policy policy = parse_policy("partition.strict.require_annotation = true\npartition.elastic.action = resize").value();
  Update move;  // scontrol update job=7 Partition=strict, unannotated
  move.job_id = "7";
  move.job.partition = "strict";
  move.sets_partition = true;
  const Decision m = decide_update(policy, move);
  EXPECT_EQ(m.verdict, Verdict::kReject);
  EXPECT_EQ(m.reason, Reason::kRestateRequired);
  EXPECT_NE(m.message.find("scontrol update job=7"), std::string::npos) << m.message;

  Update comment;  // scontrol update job=7 Comment="trainfit: model=llama3-405b seq=131072"
  comment.job_id = "7";
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-405b seq=131072", &comment.job.annotation).ok());
  EXPECT_EQ(decide_update(policy, comment).verdict, Verdict::kReject);

  comment.job.fields.per_job = "gres:gpu:h100:8";  // restated with its GPUs: checked like a submission
  comment.sets_gpus = true;
  comment.job.partition = "elastic";
  comment.sets_partition = true;
  const Decision full = decide_update(policy, comment);
  EXPECT_EQ(full.verdict, Verdict::kReject);  // an update is never resized
  EXPECT_EQ(full.reason, Reason::kTooFewGpus);

  Update gpus_only;  // TresPerJob only, by the job's owner: the job's annotation is invisible
  gpus_only.job_id = "7";
  gpus_only.job.uid = 1000;
  gpus_only.job.fields.per_job = "gres:gpu:h100:2";
  gpus_only.sets_gpus = true;
  const Decision user = decide_update(policy, gpus_only);
  EXPECT_EQ(user.verdict, Verdict::kReject);
  EXPECT_EQ(user.reason, Reason::kRestateRequired);
  EXPECT_NE(user.message.find("scontrol update job=7"), std::string::npos) << user.message;
  gpus_only.by_operator = true;  // root, SlurmUser, `operators`: passed, audited as unchecked
  const Decision g = decide_update(policy, gpus_only);
  EXPECT_EQ(g.verdict, Verdict::kPass);
  EXPECT_TRUE(g.unchecked);
  EXPECT_NE(g.message.find("by an operator"), std::string::npos);
  gpus_only.by_operator = false;
  EXPECT_TRUE(decide_update(parse_policy("unchecked_updates = allow").value(), gpus_only).unchecked);
  Policy exempting = parse_policy("exempt_users = 1000").value();
  resolve_exempt_users(exempting, [](const std::string&) -> std::optional<uint32_t> { return std::nullopt; });
  EXPECT_EQ(decide_update(exempting, gpus_only).verdict, Verdict::kPass);

  EXPECT_EQ(decide_update(policy, Update{}).verdict, Verdict::kPass);
}

// An update restating the annotation is judged where the job runs: the partition is named in
// the update (job_modify sees no partition otherwise), and its rules apply, not the top level's.
TEST(Update, ARestatedAnnotationIsJudgedInThePartitionItNames) {
  const std::string spec = "model=llama3-8b seq=4096 zero=3 recompute=full";
  const int64_t on_h100 = cli_min_gpus(spec + " gpu=h100"), on_a100 = cli_min_gpus(spec + " gpu=a100-40gb");
  ASSERT_LE(on_h100, 3);  // the premise: 3 GPUs are enough on H100, not on A100 40GB
  ASSERT_GT(on_a100, 3);
  const Policy policy = parse_policy("partition.aonly.default_gpu = a100-40gb\nrefuse_when = likely").value();  // the point figure
  Update u;  // scontrol update job=9 Comment="trainfit: ..." TresPerJob=gres:gpu:3
  u.job_id = "9";
  ASSERT_TRUE(annotation_from_comment("trainfit: " + spec, &u.job.annotation).ok());
  u.job.fields.per_job = "gres:gpu:3";
  u.sets_gpus = true;
  const Decision unnamed = decide_update(policy, u);
  EXPECT_EQ(unnamed.verdict, Verdict::kReject) << unnamed.message;
  EXPECT_NE(unnamed.message.find("Partition=NAME"), std::string::npos) << unnamed.message;
  u.sets_partition = true;  // ... Partition=aonly
  u.job.partition = "aonly";
  const Decision named = decide_update(policy, u);
  EXPECT_EQ(named.verdict, Verdict::kReject) << named.message;
  EXPECT_EQ(named.reason, Reason::kTooFewGpus);
  u.job.partition = "gpu";  // a partition under the top-level rules: H100, and 3 fit
  EXPECT_EQ(decide_update(policy, u).verdict, Verdict::kAccept);
}

}  // namespace
}  // namespace trainfit::admission
