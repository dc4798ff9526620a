// A Features= update (scontrol update job=J Features=...): where a partition's GPU nodes
// differ, --constraint selects the nodes a job runs on and so the GPU it is judged on; job_modify
// does not see the job's GPU request, so such an update by a user needs the annotation restated,
// as a partition change does. Expected verdicts come from the submissions themselves (the same
// job judged with each constraint) and from the estimator on the stated GPU.
#include <gtest/gtest.h>

#include <string>

#include "trainfit/admission.h"
#include "trainfit/estimate.h"

namespace trainfit::admission {
namespace {

std::optional<uint32_t> no_users(const std::string&) { return std::nullopt; }

Policy assembled(const std::string& slurm_conf) {
  Result<AssembledPolicy> a = assemble_policy("gpus_per_node = 8\nrefuse_when = likely\n", Result<std::string>(slurm_conf), no_users);  // the point figure
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? std::move(a).value().policy : Policy{};
}

// H100 and A100 40GB nodes in one partition, told apart by a feature.
constexpr const char* kMixed =
    "NodeName=a[1-2] Gres=gpu:a100-40gb:8 Features=a100\n"
    "NodeName=h[1-2] Gres=gpu:h100:8 Features=h100\n"
    "PartitionName=both Nodes=a[1-2],h[1-2]\n";
// Every partition's GPU nodes alike: a feature selects no other GPU.
constexpr const char* kAlike =
    "NodeName=h[1-2] Gres=gpu:h100:8 Features=h100,ib\n"
    "NodeName=h[3-4] Gres=gpu:h100:8 Features=h100\n"
    "NodeName=c1\n"
    "PartitionName=gpu Nodes=h[1-4],c1\n";
// Fits on 8 x H100 80GB, not on 8 x A100 40GB (checked below, from the estimator).
constexpr const char* kJob = "trainfit: model=llama3-8b seq=4096 zero=3";

Job submitted(const std::string& constraint) {
  Job job;
  EXPECT_TRUE(annotation_from_comment(kJob, &job.annotation).ok());
  job.fields.per_job = "gres:gpu:8";
  job.partition = "both";
  job.constraint = constraint;
  job.uid = 1000;
  return job;
}

Update features_update(const std::string& features) {  // scontrol update job=5 Features=...
  Update u;
  u.job_id = "5";
  u.job.uid = 1000;
  u.job.constraint = features;
  u.sets_features = true;
  return u;
}

TEST(UpdateFeatures, AFeatureSelectsTheJudgedGpu) {  // the premise of the tests below
  Request request;
  ASSERT_TRUE(apply_key_values(request, "model=llama3-8b seq=4096 zero=3 num_gpus=8 gpus_per_node=8", ' ').ok());
  request.gpu = "h100";
  ASSERT_TRUE(respond(request, {false, false})->breakdown.fits);
  request.gpu = "a100-40gb";
  ASSERT_FALSE(respond(request, {false, false})->breakdown.fits);
  const Policy policy = assembled(kMixed);
  EXPECT_EQ(decide(policy, submitted("h100")).verdict, Verdict::kAccept);
  EXPECT_EQ(decide(policy, submitted("a100")).verdict, Verdict::kReject);
}

TEST(UpdateFeatures, AUsersFeaturesUpdateNeedsTheAnnotationRestated) {
  const Policy policy = assembled(kMixed);
  const Decision d = decide_update(policy, features_update("a100"));
  EXPECT_EQ(d.verdict, Verdict::kReject) << d.message;
  EXPECT_EQ(d.reason, Reason::kRestateRequired);
  EXPECT_NE(d.message.find("Features"), std::string::npos) << d.message;
  EXPECT_EQ(decide_update(policy, features_update("")).verdict, Verdict::kReject);  // Features= cleared
  Update by_operator = features_update("a100");
  by_operator.by_operator = true;
  const Decision o = decide_update(policy, by_operator);
  EXPECT_EQ(o.verdict, Verdict::kPass);
  EXPECT_TRUE(o.unchecked);
  EXPECT_NE(o.message.find("Features update not checked"), std::string::npos) << o.message;
}

TEST(UpdateFeatures, WhereNodesAreAlikeAFeaturesUpdatePasses) {
  EXPECT_EQ(decide_update(assembled(kAlike), features_update("ib")).verdict, Verdict::kPass);
  EXPECT_FALSE(decide_update(assembled(kAlike), features_update("ib")).unchecked);
  EXPECT_EQ(decide_update(Policy{}, features_update("ib")).verdict, Verdict::kPass);  // slurm.conf not read
}

TEST(UpdateFeatures, ARestatedUpdateIsJudgedWithItsOwnFeatures) {
  const Policy policy = assembled(kMixed);
  Update u = features_update("h100");  // ... Comment="trainfit: ..." TresPerJob=gres:gpu:8 Partition=both Features=h100
  u.job = submitted("h100");
  u.sets_gpus = u.sets_partition = true;
  EXPECT_EQ(decide_update(policy, u).verdict, Verdict::kAccept);
  u.job.constraint = "a100";
  EXPECT_EQ(decide_update(policy, u).verdict, Verdict::kReject);
  u.job.constraint.clear();  // restated without Features=: judged on every node, the smaller GPU
  u.sets_features = false;
  EXPECT_EQ(decide_update(policy, u).verdict, Verdict::kReject);
}

}  // namespace
}  // namespace trainfit::admission
