// Decisions under slurm.conf's facts (assemble_policy): untyped GPUs judged as the partition's
// nodes' GPUs (--constraint where it selects them), partitions without GPU nodes, resizes
// bounded by the partition's GPU nodes, the Default=YES partition, and what assembling the
// policy reports. Expected verdicts come from the estimator on the stated GPU (as `trainfit
// estimate` computes it) and from the slurm.conf texts, counted by hand.
#include <gtest/gtest.h>

#include <string>

#include "trainfit/admission.h"
#include "trainfit/estimate.h"

namespace trainfit::admission {
namespace {

std::optional<uint32_t> no_users(const std::string&) { return std::nullopt; }

AssembledPolicy assembled(const std::string& conf, const std::string& slurm_conf) {
  Result<AssembledPolicy> a = assemble_policy(conf, Result<std::string>(slurm_conf), no_users);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? std::move(a).value() : AssembledPolicy{};
}

Job annotated(const std::string& annotation, const std::string& tres_per_job, const std::string& partition) {
  Job job;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &job.annotation).ok());
  job.annotation.face = Face::kOptions;
  job.fields.per_job = tres_per_job;
  job.partition = partition;
  return job;
}

// What `trainfit estimate` says of the request on `gpus` x `gpu` (8 per node).
Response estimated(const std::string& spec, const std::string& gpu, int64_t gpus) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec + " gpu=" + gpu + " num_gpus=" + std::to_string(gpus) + " gpus_per_node=8", ' ').ok());
  Result<Response> r = respond(request, {false, false});
  EXPECT_TRUE(r.ok()) << spec;
  return r.ok() ? r.value() : Response{};
}

constexpr const char* kNodes =
    "NodeName=a[1-4] Gres=gpu:a100-40gb:8 Features=a100\n"
    "NodeName=h[1-2] Gres=gpu:h100:8 Features=h100,ib\n"
    "NodeName=u1 Gres=gpu:8\n"
    "NodeName=c[1-2]\n"
    "PartitionName=aonly Nodes=a[1-4]\n"
    "PartitionName=both Nodes=a[1-2],h[1-2]\n"
    "PartitionName=untyped Nodes=u1\n"
    "PartitionName=cpu Nodes=c[1-2]\n"
    "PartitionName=mixed Nodes=h[1-2],c[1-2]\n";
// Fits on 8 x H100 80GB, not on 8 x A100 40GB (checked below, from the estimator).
constexpr const char* kJob = "model=llama3-8b seq=4096 zero=3";

TEST(PartitionGpus, UntypedGpusAreTheNodesGpus) {
  ASSERT_TRUE(estimated(kJob, "h100", 8).breakdown.fits);
  ASSERT_FALSE(estimated(kJob, "a100-40gb", 8).breakdown.fits);
  const AssembledPolicy a = assembled("gpus_per_node = 8\nrefuse_when = likely\n", kNodes);  // judged on the point figure
  const Decision on_a100 = decide(a.policy, annotated(kJob, "gres:gpu:8", "aonly"));
  EXPECT_EQ(on_a100.verdict, Verdict::kReject) << on_a100.message;
  EXPECT_EQ(on_a100.gpu, "a100-40gb");
  // Where the nodes mix types, the smallest (every rank must fit).
  EXPECT_EQ(decide(a.policy, annotated(kJob, "gres:gpu:8", "both")).gpu, "a100-40gb");
  // Untyped nodes (gpu:8) and partitions slurm.conf does not have: default_gpu.
  const Decision untyped = decide(a.policy, annotated(kJob, "gres:gpu:8", "untyped"));
  EXPECT_EQ(untyped.verdict, Verdict::kAccept) << untyped.message;
  EXPECT_EQ(untyped.gpu, "h100");
  EXPECT_EQ(decide(a.policy, annotated(kJob, "gres:gpu:8", "elsewhere")).gpu, "h100");
  // A typed request is judged by its type, as before.
  EXPECT_EQ(decide(a.policy, annotated(kJob, "gres:gpu:h100:8", "both")).verdict, Verdict::kAccept);
  // slurm.conf not read: default_gpu.
  Result<AssembledPolicy> unread = assemble_policy("", make_error(ErrorCode::kMissing, "slurm.conf", "not found"), no_users);
  ASSERT_TRUE(unread.ok());
  EXPECT_FALSE(unread->slurm_conf_note.empty());
  EXPECT_EQ(decide(unread->policy, annotated(kJob, "gres:gpu:8", "aonly")).verdict, Verdict::kAccept);
}

TEST(PartitionGpus, ConstraintSelectsTheType) {
  const AssembledPolicy a = assembled("", kNodes);
  auto gpu_with = [&](const std::string& constraint) {
    Job job = annotated(kJob, "gres:gpu:8", "both");
    job.constraint = constraint;
    return decide(a.policy, job).gpu;
  };
  EXPECT_EQ(gpu_with("h100"), "h100");
  EXPECT_EQ(gpu_with("h100&ib"), "h100");
  EXPECT_EQ(gpu_with("ib|h100"), "h100");
  EXPECT_EQ(gpu_with("a100|h100"), "a100-40gb");
  EXPECT_EQ(gpu_with("h100&a100"), "a100-40gb");  // selects no node: ignored
  EXPECT_EQ(gpu_with("[h100*2]"), "a100-40gb");   // not read: every node
  EXPECT_EQ(gpu_with("h100|ib&a100"), "a100-40gb");
  EXPECT_EQ(gpu_with("H100"), "a100-40gb");        // features are case-sensitive
}

TEST(PartitionGpus, NoGpuNodesNoLlmJob) {
  const AssembledPolicy a = assembled("", kNodes);
  const Decision d = decide(a.policy, annotated(kJob, "gres:gpu:4", "cpu"));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_EQ(d.reason, Reason::kGpuRequest);
  EXPECT_NE(d.message.find("partition cpu has no nodes with GPUs"), std::string::npos) << d.message;
  Job cpu_job;  // not annotated, no GPUs: not the gate's
  cpu_job.partition = "cpu";
  EXPECT_EQ(decide(a.policy, cpu_job).verdict, Verdict::kPass);
}

// A resize counts the partition's GPU nodes: "mixed" has h1, h2 (8 GPUs each) and two CPU nodes.
TEST(PartitionGpus, ResizeCountsGpuNodesOnly) {
  const std::string big = "model=llama3-70b seq=8192 zero=3 recompute=full";
  const int64_t need = estimated(big, "h100", 8).min_gpus.gpus;
  ASSERT_GT(need, 16) << "the test needs a job that needs more than 16 GPUs";
  ASSERT_LE(need, 32);
  const AssembledPolicy a = assembled("action = resize\ngpus_per_node = 8\nresize_max_gpus = 64\nrefuse_when = likely\n", kNodes);
  const Decision d = decide(a.policy, annotated(big, "gres:gpu:h100:8", "mixed"));
  EXPECT_EQ(d.verdict, Verdict::kReject) << d.message;
  EXPECT_NE(d.message.find("partition mixed has 2 GPU nodes with h100 (16 GPUs)"), std::string::npos) << d.message;
  // In "both" only the 2 H100 nodes count for an h100 job (the A100 nodes are not its type).
  const Decision both = decide(a.policy, annotated(big, "gres:gpu:h100:8", "both"));
  EXPECT_NE(both.message.find("partition both has 2 GPU nodes with h100 (16 GPUs)"), std::string::npos) << both.message;
  // A partition slurm.conf does not know is resized as before.
  const Decision elsewhere = decide(a.policy, annotated(big, "gres:gpu:h100:8", "elsewhere"));
  EXPECT_EQ(elsewhere.verdict, Verdict::kResize) << elsewhere.message;
  EXPECT_GE(elsewhere.resized_to, need);
  // A resize that fits in the GPU nodes is granted: kJob on 2 GPUs, resized to its minimum.
  const int64_t small_need = estimated(std::string(kJob) + " fit_bound=likely_high", "h100", 8).min_gpus.gpus;  // resize_to = high
  ASSERT_GT(small_need, 2);
  ASSERT_LE(small_need, 16);
  const Decision granted = decide(a.policy, annotated(kJob, "gres:gpu:h100:2", "mixed"));
  EXPECT_EQ(granted.verdict, Verdict::kResize) << granted.message;
  EXPECT_EQ(granted.resized_to, small_need);
}

TEST(PartitionGpus, DefaultPartitionFromSlurmConf) {
  const std::string slurm = std::string(kNodes) + "PartitionName=strict Nodes=h[1-2] Default=YES\n";
  const AssembledPolicy a = assembled("partition.strict.require_annotation = true\n", slurm);
  EXPECT_EQ(a.policy.default_partition, "strict");
  for (const Error& e : a.problems) EXPECT_NE(e.field, "default_partition") << e.message;
  Job plain;  // sbatch --gpus=h100:8 without -p
  plain.fields.per_job = "gres:gpu:h100:8";
  const Decision d = decide(a.policy, plain);
  EXPECT_EQ(d.verdict, Verdict::kReject) << d.message;
  EXPECT_EQ(d.reason, Reason::kAnnotationRequired);
  // trainfit.conf's default_partition wins, and the difference is a problem to fix.
  const AssembledPolicy stale = assembled("default_partition = aonly\npartition.strict.require_annotation = true\n", slurm);
  EXPECT_EQ(stale.policy.default_partition, "aonly");
  int stale_default = 0;
  for (const Error& e : stale.problems) {
    if (e.field != "default_partition") continue;
    ++stale_default;
    EXPECT_NE(e.message.find("slurm.conf's default partition (Default=YES) is 'strict'"), std::string::npos) << e.message;
  }
  EXPECT_EQ(stale_default, 1);
  EXPECT_EQ(decide(stale.policy, plain).verdict, Verdict::kPass);
}

TEST(PartitionGpus, AssemblyReportsWhatDisagrees) {
  // default_gpu = h100 where partition aonly has only a100-40gb nodes; a node type not in the catalog.
  const AssembledPolicy a = assembled("exempt_accounts = ops\n",
                                      std::string(kNodes) + "NodeName=x1 Gres=gpu:mystery:4\nPartitionName=odd Nodes=x1\n");
  int default_gpu = 0, unknown_type = 0;
  for (const Error& e : a.problems) {
    if (e.field == "default_gpu" && e.message.find("partition aonly") != std::string::npos) ++default_gpu;
    if (e.field == "partition.odd" && e.message.find("'mystery'") != std::string::npos) ++unknown_type;
  }
  EXPECT_EQ(default_gpu, 1);
  EXPECT_EQ(unknown_type, 1);
  ASSERT_EQ(a.warnings.size(), 1u);  // exempt_accounts, no AccountingStorageEnforce
  EXPECT_EQ(a.warnings[0].field, "exempt_accounts");
  EXPECT_NE(a.warnings[0].message.find("AccountingStorageEnforce is not set"), std::string::npos);
  EXPECT_TRUE(assembled("exempt_accounts = ops\n", "AccountingStorageEnforce=associations\n").warnings.empty());
  EXPECT_EQ(assembled("exempt_accounts = ops\n", "AccountingStorageEnforce=nojobs\n").warnings.size(), 1u);
  // exempt_qos: only AccountingStorageEnforce=qos (or all) checks a job's QOS (slurm.conf.5).
  const AssembledPolicy qos = assembled("exempt_qos = fast\n", "AccountingStorageEnforce=associations,limits\n");
  ASSERT_EQ(qos.warnings.size(), 1u);
  EXPECT_EQ(qos.warnings[0].field, "exempt_qos");
  for (const char* enforce : {"associations,qos", "all", "QOS"}) {
    EXPECT_TRUE(assembled("exempt_qos = fast\n", std::string("AccountingStorageEnforce=") + enforce + "\n").warnings.empty())
        << enforce;
  }
  // The exempt users and operators are resolved in the same pass.
  const AssembledPolicy users = assembled("exempt_users = 1234,nobody-here\noperators = 99\n", "");
  EXPECT_EQ(users.policy.defaults.exempt_uids.count(1234u), 1u);
  EXPECT_EQ(users.policy.operator_uids.count(99u), 1u);
  EXPECT_EQ(users.unknown_users, std::vector<std::string>{"nobody-here"});
}

// A whole-node job holds its nodes' GPUs as slurm.conf's Gres= counts them, not trainfit.conf's
// gpus_per_node: 4-GPU nodes are 4 per node, the fewest where the partition mixes node sizes.
TEST(PartitionGpus, WholeNodesHoldTheirNodesGpus) {
  const AssembledPolicy a = assembled("gpus_per_node = 8\n",
                                      "NodeName=s[1-2] Gres=gpu:h100:4\nNodeName=b[1-2] Gres=gpu:h100:8 Features=big\n"
                                      "PartitionName=small Nodes=s[1-2] OverSubscribe=EXCLUSIVE\n"
                                      "PartitionName=sizes Nodes=s[1-2],b[1-2]\n");
  Job whole = annotated("model=llama3-8b zero=3", "", "small");
  EXPECT_EQ(decide(a.policy, whole).gpus_requested, 4);  // one exclusive 4-GPU node
  whole.fields.nodes = 2;
  EXPECT_EQ(decide(a.policy, whole).gpus_requested, 8);
  Job exclusive = annotated("model=llama3-8b zero=3", "", "sizes");
  exclusive.fields.whole_nodes = true;  // --exclusive, 1 node: a 4-GPU one or an 8-GPU one
  EXPECT_EQ(decide(a.policy, exclusive).gpus_requested, 4);
  exclusive.constraint = "big";  // --constraint=big: the 8-GPU nodes only
  EXPECT_EQ(decide(a.policy, exclusive).gpus_requested, 8);
}

}  // namespace
}  // namespace trainfit::admission
