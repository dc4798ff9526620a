// An --exclusive job (or any job of an OverSubscribe=EXCLUSIVE partition) that names fewer
// GPUs than its nodes have: Slurm allocates every GPU of the nodes. Measured on 22.05.8:
// `sbatch --exclusive --gres=gpu:h100:2` on a 64-GPU node runs with JOB_GRES=gpu:h100:64
// (scontrol show job -d). So the expected holdings below are the nodes' GPUs, from the
// policy's node layout and the job's node count, never from the decision.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

constexpr int64_t kNodeGpus = 64;  // the loopback cluster's node (tests/slurm/cluster.sh)

Policy node_policy() {
  Policy policy = parse_policy("gpus_per_node = 64\naction = reject\n").value();
  policy.whole_node_partitions.insert("whole");
  return policy;
}

Job job(const std::string& annotation, const std::string& per_job, bool exclusive, const std::string& partition = "") {
  Job j;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &j.annotation).ok());
  j.fields.per_job = per_job;
  j.fields.whole_nodes = exclusive;
  j.partition = partition;
  return j;
}

int64_t audited_gpus_held(const Decision& d) {
  AuditRecord record;
  record.decision = d;
  return nlohmann::json::parse(audit_json(record)).at("gpus_held").get<int64_t>();
}

TEST(WholeNodeGpus, ExclusiveJobHoldsItsNodesGpusJudgedOnTheGpusItAsksFor) {
  const Decision d = decide(node_policy(), job("model=llama3-8b zero=3 recompute=full check=true", "gres:gpu:h100:4", true));
  ASSERT_EQ(d.verdict, Verdict::kAccept) << d.message;
  EXPECT_EQ(d.gpus_requested, 4);  // the judgement: the 4 GPUs it asks for
  EXPECT_EQ(d.gpus_held, kNodeGpus);
  EXPECT_EQ(d.held_because, "--exclusive");
  EXPECT_NE(d.message.find("(--exclusive: the job holds 64 x h100; judged on 4 of them)"), std::string::npos) << d.message;
  EXPECT_EQ(audited_gpus_held(d), kNodeGpus);
}

TEST(WholeNodeGpus, TheSameJobWithoutExclusiveHoldsWhatItAsksFor) {
  const Decision d = decide(node_policy(), job("model=llama3-8b zero=3 recompute=full check=true", "gres:gpu:h100:4", false));
  ASSERT_EQ(d.verdict, Verdict::kAccept) << d.message;
  EXPECT_EQ(d.gpus_held, 0);
  EXPECT_EQ(d.message.find("holds"), std::string::npos) << d.message;
  EXPECT_EQ(audited_gpus_held(d), 4);
}

TEST(WholeNodeGpus, ExclusivePartitionAndSeveralNodes) {
  const Decision in_whole = decide(node_policy(), job("model=llama3-8b zero=3", "gres:gpu:h100:4", false, "whole"));
  EXPECT_EQ(in_whole.gpus_held, kNodeGpus);
  EXPECT_EQ(in_whole.held_because, "OverSubscribe=EXCLUSIVE");
  Job two = job("model=llama3-8b zero=3", "gres:gpu:h100:4", true);
  two.fields.nodes = 2;
  EXPECT_EQ(decide(node_policy(), two).gpus_held, 2 * kNodeGpus);
  // 96 GPUs take two 64-GPU nodes: the job holds 128.
  EXPECT_EQ(decide(node_policy(), job("model=llama3-8b zero=3", "gres:gpu:h100:96", true)).gpus_held, 2 * kNodeGpus);
  // All of a node's GPUs asked for: nothing more held, no note.
  EXPECT_EQ(decide(node_policy(), job("model=llama3-8b zero=3", "gres:gpu:h100:64", true)).gpus_held, 0);
}

TEST(WholeNodeGpus, ARefusalSaysWhatTheJobWouldHaveHeld) {
  const Decision d = decide(node_policy(), job("model=llama3-70b seq=8192 zero=3 recompute=full", "gres:gpu:h100:2", true));
  ASSERT_EQ(d.verdict, Verdict::kReject) << d.message;
  EXPECT_EQ(d.gpus_held, kNodeGpus);
  EXPECT_NE(d.message.find("the job holds 64 x h100; judged on 2 of them"), std::string::npos) << d.message;
  EXPECT_EQ(audited_gpus_held(d), kNodeGpus);
}

}  // namespace
}  // namespace trainfit::admission
