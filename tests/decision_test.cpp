// The gate's decisions: accept, reject, warn, resize; partition lists, exemptions, whole
// nodes, hetjobs, advice. Expected values come from the request itself or from respond() on
// the same request (the CLI's path), never from decide()'s own output.
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

TEST(Decision, AcceptRejectWarnResize) {
  Policy policy = parse_policy("gpus_per_node = 8\npartition.elastic.action = resize\npartition.soft.action = warn")
                      .value();
  const int64_t expected = cli_min_gpus(std::string(kBig) + " gpu=h100 gpus_per_node=8");
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8")).verdict, Verdict::kAccept);
  const Decision reject = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  EXPECT_EQ(reject.verdict, Verdict::kReject);
  EXPECT_EQ(reject.reason, Reason::kTooFewGpus);
  EXPECT_EQ(reject.message.rfind("trainfit: llama3-70b at seq 8192 needs ", 0), 0u) << reject.message;
  EXPECT_NE(reject.message.find("on 8 x H100 (79.6 GiB usable); past the usable HBM even at its likely low end; "
                                "min_gpus_to_fit=" + std::to_string(expected)),
            std::string::npos)
      << reject.message;
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8", "soft")).verdict, Verdict::kWarn);
  const Job elastic = job_of(kBig, "gres:gpu:h100:8", "elastic");
  const Decision resize = decide(policy, elastic);
  EXPECT_EQ(resize.verdict, Verdict::kResize);
  EXPECT_EQ(resize.resized_to, expected);
  EXPECT_EQ(granted_by_slurm(elastic, resize), expected);
  EXPECT_NE(resize.message.find("resized from 8 to " + std::to_string(expected) + " x H100"), std::string::npos);
  EXPECT_NE(resize.message.find("global batch 8 -> " + std::to_string(expected)), std::string::npos) << resize.message;
}

// One node rule on every face: a trainfit.conf that says nothing about nodes and a CLI
// request that says nothing about them give the same min_gpus_to_fit, and the refusal says
// in how many nodes.
TEST(Decision, TheCliAndADefaultPolicyCountNodesAlike) {
  const Policy policy = parse_policy("action = reject\n").value();
  const int64_t cli = cli_min_gpus(std::string(kBig) + " gpu=h100");
  const Decision reject = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  ASSERT_EQ(reject.verdict, Verdict::kReject) << reject.message;
  EXPECT_EQ(reject.min_gpus, cli);
  ASSERT_GT(cli, 8);
  EXPECT_EQ(cli % 8, 0) << "beyond one node: whole 8-GPU nodes";
  EXPECT_NE(reject.message.find("min_gpus_to_fit=" + std::to_string(cli) + " (" + std::to_string(cli / 8) + " nodes of 8)"),
            std::string::npos)
      << reject.message;
}

// Slurm gives an --exclusive job (or any job of an OverSubscribe=EXCLUSIVE partition) every
// GRES of its nodes: judged as gpus_per_node x nodes, never resized.
TEST(Decision, WholeNodeJobsHoldTheirNodesGpus) {
  Policy policy = parse_policy("gpus_per_node = 8\npartition.strict.require_annotation = true\n"
                               "partition.strict.action = resize\nrefuse_when = likely").value();  // the point figure
  policy.whole_node_partitions.insert("whole");
  Job plain = job_of("model=llama3-8b", "", "strict");
  plain.annotation = Annotation{};
  EXPECT_EQ(decide(policy, plain).verdict, Verdict::kPass);  // a CPU job
  plain.fields.whole_nodes = true;
  const Decision refused = decide(policy, plain);
  EXPECT_EQ(refused.reason, Reason::kAnnotationRequired);
  EXPECT_NE(refused.message.find("holds its nodes' 8 GPUs"), std::string::npos) << refused.message;
  Job two_nodes = job_of(kBig, "", "strict");
  two_nodes.fields.whole_nodes = true;
  two_nodes.fields.nodes = 2;
  const Decision on16 = decide(policy, two_nodes);
  EXPECT_EQ(on16.gpus_requested, 16);
  EXPECT_EQ(on16.verdict, Verdict::kReject);  // 70B at seq 8192 needs more: refused, not resized
  Job in_whole = job_of("model=llama3-8b zero=3", "", "whole");
  EXPECT_EQ(decide(policy, in_whole).gpus_requested, 8);
  EXPECT_EQ(decide(policy, in_whole).verdict, Verdict::kAccept);
}

TEST(Decision, HetjobComponentsAreNeverResized) {
  Policy policy = parse_policy("gpus_per_node = 8\naction = resize\npartition.strict.require_annotation = true").value();
  Job first = job_of(kBig, "gres:gpu:h100:8");
  EXPECT_EQ(decide(policy, first).verdict, Verdict::kResize);  // alone: resized
  first.het_component = 0;
  const Decision d = decide(policy, first);
  EXPECT_EQ(d.verdict, Verdict::kReject);  // a component: the job's total is not in view
  EXPECT_EQ(d.reason, Reason::kTooFewGpus);
  Job helper = job_of("model=llama3-8b", "gres:gpu:h100:64", "strict");
  helper.annotation = Annotation{};
  helper.het_component = 1;  // the first component carries the annotation
  EXPECT_EQ(decide(policy, helper).verdict, Verdict::kPass);
}

TEST(Decision, PartitionListsAreDedupedAndCapped) {
  Policy policy = parse_policy("gpus_per_node = 8").value();
  std::string many;
  for (int i = 0; i <= static_cast<int>(kMaxJobPartitions); ++i) many += "p" + std::to_string(i) + ",";
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", many)).verdict, Verdict::kReject);
  std::string huge;  // read up to the 65th distinct name, not compared name against name to the end
  for (int i = 0; i < 20000; ++i) huge += "q" + std::to_string(i) + ",";
  const Decision d = decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", huge));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_NE(d.message.find("more than 64 distinct partitions"), std::string::npos) << d.message;
  std::string same;
  for (int i = 0; i < 1000; ++i) same += "gpu,";
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", same)).verdict, Verdict::kAccept);
}

// An estimator that counts the predictions decide() asks of the local model.
class CountingEstimator : public Estimator {
 public:
  Result<Response> predict(const Request& request, double headroom, bool with_min_gpus) const override {
    ++predictions;
    return local_estimator().predict(request, headroom, with_min_gpus);
  }
  std::optional<Advice> cheapest_change(const Response& response) const override {
    return local_estimator().cheapest_change(response);
  }
  mutable int predictions = 0;
};

// 64 listed partitions cost one estimate per distinct rule set, not one each (issue: 64 cost ~55x one).
TEST(Decision, PartitionsJudgedAlikeAreEstimatedOnce) {
  const Policy policy = parse_policy("gpus_per_node = 8\npartition.small.default_gpu = a100-40gb\n"
                                     "partition.soft.headroom = 0.1\npartition.soft.action = warn").value();
  std::string many;
  for (int i = 0; i + 2 < static_cast<int>(kMaxJobPartitions); ++i) many += (i ? ",p" : "p") + std::to_string(i);
  for (const char* gres : {"gres:gpu:h100:8", "gres:gpu:8"}) {
    CountingEstimator alike;
    const Decision d = decide(policy, job_of("model=llama3-8b zero=3", gres, many), alike);
    EXPECT_EQ(d.verdict, Verdict::kAccept) << d.message;
    EXPECT_EQ(alike.predictions, 1) << gres;
  }
  CountingEstimator three;  // the top level's rules, a100-40gb's, and a headroom of 10%: three rule sets
  const Decision untyped = decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:8", many + ",small,soft"), three);
  EXPECT_EQ(three.predictions, 3) << untyped.message;
  CountingEstimator typed;  // typed h100: "small" judges h100 like the top level; "soft" differs
  decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", many + ",small,soft"), typed);
  EXPECT_EQ(typed.predictions, 2);
  // The verdicts are those of each partition judged alone.
  for (const char* part : {"p0", "small", "soft"}) {
    const Job alone = job_of("model=llama3-405b seq=8192", "gres:gpu:8", part);
    const Job listed = job_of("model=llama3-405b seq=8192", "gres:gpu:8", std::string(part) + "," + many);
    EXPECT_EQ(decide(policy, alone).per_gpu_gb, decide(policy, listed).per_gpu_gb) << part;
  }
}

TEST(Decision, ResizedShapesAreOnesSlurmRuns) {
  auto tres_count = [](const std::string& text) { return parse_tres(text).ok() ? parse_tres(text)->gpus : 0; };
  int checked = 0, refused_for_nodes = 0;
  for (int64_t per_node : {4, 6, 8}) {
    for (int64_t limit : {32, 1024}) {
     for (int64_t node_cap : {0, 3, 6}) {  // the partition's nodes (slurm.conf); 0 = not known
      Policy policy = parse_policy("action = resize\ngpus_per_node = " + std::to_string(per_node) +
                                   "\nresize_max_gpus = " + std::to_string(limit)).value();
      if (node_cap > 0) policy.partition_max_nodes[""] = node_cap;
      for (const char* seq : {"4096", "8192", "16384"}) {
        for (int layout = 0; layout < 9; ++layout) {
          Job job = job_of(std::string("model=llama3-70b zero=3 recompute=full seq=") + seq, "");
          JobGpuFields& f = job.fields;
          switch (layout) {
            case 0: f.per_job = "gres:gpu:h100:8", f.tasks = 1; break;                  // -n 1 --gpus=8
            case 1: f.per_job = "gres:gpu:h100:8", f.tasks = 2, f.nodes = 1; break;     // -n 2 -N 1 --gpus=8
            case 2: f.per_job = "gres:gpu:h100:8"; break;                               // --gpus=8
            case 3: f.per_task = "gres:gpu:h100:3", f.tasks = 2, f.nodes = 1; break;    // --gpus-per-task=3 -n 2 -N 1
            case 4: f.per_task = "gres:gpu:h100:2", f.tasks = 2, f.tasks_per_node = 1; break;
            case 5: f.per_task = "gres:gpu:h100:1", f.tasks = 8; break;
            case 6: f.per_node = "gres:gpu:h100:4", f.nodes = 1, f.tasks = 1; break;    // --gpus-per-node=4 -N 1 -n 1
            case 7: f.per_node = "gres:gpu:h100:2", f.nodes = 2, f.tasks = 4, f.tasks_per_node = 2; break;
            case 8: f.per_job = "gres:gpu:h100:4", f.tasks = 4, f.tasks_per_node = 1; break;
          }
          const Decision d = decide(policy, job);
          if (d.message.find("allows a job (" + std::to_string(node_cap) + ")") != std::string::npos) ++refused_for_nodes;
          if (d.verdict != Verdict::kResize) continue;
          ++checked;
          const std::string what = "layout " + std::to_string(layout) + ", " + std::to_string(per_node) + " per node, seq " +
                                   seq + ", limit " + std::to_string(limit) + ": " + d.message;
          const int64_t nodes = d.new_nodes > 0 ? d.new_nodes : std::max<int64_t>(1, f.nodes);
          const int64_t tasks = d.new_tasks > 0 ? d.new_tasks : f.tasks;
          const int64_t granted = granted_by_slurm(job, d);
          if (node_cap > 0) {
            EXPECT_LE(nodes, node_cap) << what;
          }
          EXPECT_EQ(granted, d.resized_to) << what;
          EXPECT_GE(granted, d.min_gpus) << what;
          EXPECT_LE(granted, limit) << what;
          if (tasks > 0) {
            EXPECT_GE(tasks, nodes) << what;
          }
          if (f.tasks_per_node > 0 && tasks > 0) {
            EXPECT_LE(tasks, nodes * f.tasks_per_node) << what;
          }
          if (!f.per_task.empty()) {
            EXPECT_LE(tasks, nodes * (per_node / tres_count(f.per_task))) << what;
          } else if (!f.per_node.empty() || !d.new_tres_per_node.empty()) {
            EXPECT_LE(tres_count(d.new_tres_per_node.empty() ? f.per_node : d.new_tres_per_node), per_node) << what;
          } else {
            EXPECT_LE(granted, nodes * per_node) << what;
          }
        }
      }
     }
    }
  }
  EXPECT_GT(checked, 60);
  EXPECT_GT(refused_for_nodes, 0);  // some layouts need more nodes than 3 or 6
}

// A resize must grant at least what it says, whatever the job's layout and whatever
// gpus_per_node the annotation claims: the partition's layout is the one truth.
struct Layout {
  const char* name;
  JobGpuFields fields;
  const char* extra_annotation;
};

class ResizeGrants : public ::testing::TestWithParam<Layout> {};

TEST_P(ResizeGrants, AtLeastWhatTheMessageSays) {
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8\nresize_max_gpus = 512").value();
  Job job = job_of(std::string(kBig) + " " + GetParam().extra_annotation, "");
  job.fields = GetParam().fields;
  const Decision d = decide(policy, job);
  ASSERT_EQ(d.verdict, Verdict::kResize) << d.message;
  const int64_t least = cli_min_gpus(std::string(kBig) + " gpu=h100 gpus_per_node=8");
  EXPECT_GE(d.resized_to, least);
  EXPECT_GE(granted_by_slurm(job, d), d.resized_to) << d.message;
  EXPECT_NE(d.message.find("to " + std::to_string(d.resized_to) + " x H100"), std::string::npos) << d.message;
  if (!d.new_tres_per_node.empty()) {
    EXPECT_EQ(d.new_nodes * parse_tres(d.new_tres_per_node)->gpus, d.resized_to);
  }
}

JobGpuFields fields(const char* per_job, const char* per_node, const char* per_task, int64_t nodes, int64_t tasks) {
  JobGpuFields f;
  f.per_job = per_job, f.per_node = per_node, f.per_task = per_task, f.nodes = nodes, f.tasks = tasks;
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ResizeGrants,
    ::testing::Values(Layout{"PerJob", fields("gres:gpu:h100:8", "", "", 0, 0), ""},
                      Layout{"PerNodeWithAnnotatedElevenPerNode", fields("", "gres:gpu:h100:8", "", 1, 0),
                             "gpus_per_node=11"},
                      Layout{"PerNodeTwoNodes", fields("", "gres:gpu:h100:4", "", 2, 0), ""},
                      Layout{"PerTask", fields("", "", "gres:gpu:h100:1", 0, 8), ""},
                      Layout{"PerTaskTwo", fields("", "", "gres:gpu:h100:2", 0, 3), ""},
                      Layout{"PerJobWithTasks", fields("gres:gpu:h100:8", "", "", 0, 8), ""},
                      Layout{"PerJobOddTasks", fields("gres:gpu:h100:8", "", "", 0, 3), "gpus_per_node=16"}),
    [](const ::testing::TestParamInfo<Layout>& layout) { return std::string(layout.param.name); });

TEST(Decision, ResizeKeepsTasksTiedToGpusOrSaysSo) {
  // Resized to the point figure's count (3 nodes of 8 for kBig): -n 3 stays one task per node.
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8\nresize_to = point").value();
  Job tied = job_of(kBig, "gres:gpu:h100:8");
  tied.fields.tasks = 8;  // -n 8 --gpus=8
  const Decision d = decide(policy, tied);
  ASSERT_EQ(d.verdict, Verdict::kResize);
  EXPECT_EQ(d.new_tasks, d.resized_to);
  Job per_task = job_of(kBig, "");
  per_task.fields.per_task = "gres:gpu:h100:1";
  per_task.fields.tasks = 8;  // -n 8 --gpus-per-task=1
  const Decision t = decide(policy, per_task);
  EXPECT_EQ(t.new_tasks, t.resized_to);
  EXPECT_TRUE(t.new_tres_per_job.empty());
  Job loose = job_of(kBig, "gres:gpu:h100:8");
  loose.fields.tasks = 3;
  const Decision l = decide(policy, loose);
  EXPECT_EQ(l.new_tasks, 0);
  EXPECT_NE(l.message.find("no longer tied"), std::string::npos) << l.message;
}

// slurmctld 23.11+ hands the plugin "gres/gpu:..." and refuses "gres:gpu:..." written back
// ("Invalid Trackable RESource (TRES) specification", measured on 24.11.5); 22.05 speaks
// "gres:gpu". A resize writes in the spelling it was given, in whichever field it rewrites.
TEST(Decision, ResizeWritesTheSpellingSlurmctldGave) {
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8").value();
  for (const char* prefix : {"gres/gpu", "gres:gpu", "gpu"}) {
    const std::string p(prefix);
    const Decision per_job = decide(policy, job_of(kBig, p + ":h100:8"));
    ASSERT_EQ(per_job.verdict, Verdict::kResize) << prefix;
    EXPECT_EQ(per_job.new_tres_per_job, p + ":h100:" + std::to_string(per_job.resized_to));
    Job node = job_of(kBig, "");
    node.fields.per_node = "gres/nvme:1," + p + ":h100:8";
    const Decision per_node = decide(policy, node);
    ASSERT_EQ(per_node.verdict, Verdict::kResize) << prefix;
    EXPECT_EQ(per_node.new_tres_per_node.rfind("gres/nvme:1," + p + ":h100:", 0), 0u) << per_node.new_tres_per_node;
    Job socket = job_of(kBig, "");  // a per-socket request becomes a per-job one, same spelling
    socket.fields.per_socket = p + "=1";
    socket.fields.sockets_per_node = 2;
    const Decision per_socket = decide(policy, socket);
    ASSERT_EQ(per_socket.verdict, Verdict::kResize) << prefix;
    EXPECT_EQ(per_socket.new_tres_per_job, p + ":" + std::to_string(per_socket.resized_to));
  }
}

TEST(Decision, ResizeRespectsTheMaximum) {
  Policy policy = parse_policy("action = resize\nresize_max_gpus = 16\ngpus_per_node = 8").value();
  const Decision d = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_NE(d.message.find("resize limit of 16"), std::string::npos) << d.message;
}

TEST(Decision, APartitionListIsHeldToEachPartition) {
  const Policy policy = parse_policy(
                            "gpus_per_node = 8\npartition.elastic.action = resize\npartition.strict.require_annotation = "
                            "true\npartition.soft.action = warn\npartition.soft2.action = warn\n"
                            "partition.small.default_gpu = a100-40gb\npartition.big.default_gpu = h200")
                            .value();
  Job plain;
  plain.fields.per_job = "gres:gpu:8";
  for (const char* list : {"strict,gpu", "gpu,strict", " gpu , strict "}) {
    plain.partition = list;
    const Decision d = decide(policy, plain);
    EXPECT_EQ(d.verdict, Verdict::kReject) << list;
    EXPECT_EQ(d.reason, Reason::kAnnotationRequired) << list;
  }
  Job cpu_only;  // a CPU job in that partition is not an LLM training job
  cpu_only.partition = "strict";
  EXPECT_EQ(decide(policy, cpu_only).verdict, Verdict::kPass);
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8", "elastic,gpu")).verdict, Verdict::kResize);
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8", "soft,gpu")).verdict, Verdict::kReject);
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8", "soft,soft2")).verdict, Verdict::kWarn);
  // Untyped GPUs are checked as each partition's default GPU: it fits on H200, not A100 40GB.
  const char* mid = "model=llama3-8b zero=3 seq=8192";
  EXPECT_EQ(decide(policy, job_of(mid, "gres:gpu:8", "big")).verdict, Verdict::kAccept);
  const Decision both = decide(policy, job_of(mid, "gres:gpu:8", "big,small"));
  EXPECT_EQ(both.verdict, Verdict::kReject);
  EXPECT_NE(both.message.find("partition small"), std::string::npos) << both.message;
}

TEST(Decision, Exemptions) {
  Policy policy = parse_policy("exempt_users = 1001\nexempt_accounts = ops\nexempt_qos = admin\n"
                               "partition.strict.require_annotation = true\npartition.strict.exempt_users = 1001\n"
                               "partition.other.exempt_users = 7")
                      .value();
  resolve_exempt_users(policy, fake_passwd);
  Job job = job_of(kBig, "gres:gpu:h100:8");
  EXPECT_EQ(decide(policy, job).verdict, Verdict::kReject);
  job.uid = 1001;
  EXPECT_TRUE(decide(policy, job).exempt);
  EXPECT_EQ(decide(policy, job).verdict, Verdict::kPass);
  job.partition = "strict,other";  // exempt in one partition only: still held to the other
  EXPECT_FALSE(decide(policy, job).exempt);
  job.uid = 5;
  job.partition = "";
  job.account = "ops";
  EXPECT_TRUE(decide(policy, job).exempt);
  job.account = "";
  job.qos = "admin";
  EXPECT_TRUE(decide(policy, job).exempt);
}

TEST(Decision, EachRefusalHasItsReason) {
  const Policy policy = parse_policy("partition.strict.require_annotation = true").value();
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8")).reason, Reason::kTooFewGpus);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b", "gres:gpu:rtx9000:8")).reason, Reason::kUnknownGpu);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "")).reason, Reason::kGpuRequest);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:16777216")).reason, Reason::kGpuRequest);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b tp=4", "gres:gpu:h100:6")).reason, Reason::kGpuRequest);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b tp=3", "gres:gpu:h100:9")).reason, Reason::kInvalidAnnotation);
  Job plain;
  plain.fields.per_job = "gres:gpu:8";
  plain.partition = "strict";
  EXPECT_EQ(decide(policy, plain).reason, Reason::kAnnotationRequired);
  Job broken = job_of("model=llama3-8b", "gres:gpu:8");
  broken.annotation_read = make_error(ErrorCode::kInvalidValue, "seq_length", "seq='abc' is not valid");
  EXPECT_EQ(decide(policy, broken).reason, Reason::kInvalidAnnotation);
}

TEST(Decision, MixedGpuTypesAreCheckedAgainstTheSmallest) {
  const Policy policy = parse_policy("").value();
  const Decision d = decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:a100-40gb:4,gres:gpu:h100:4"));
  EXPECT_EQ(d.gpu, "a100-40gb");
  EXPECT_EQ(d.gpus_requested, 8);
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:4,gres:gpu:a100-40gb:4")).gpu, "a100-40gb");
}

TEST(Decision, NvmlTypeNamesAndSiteAliases) {
  const Policy policy = parse_policy("gpu_alias.h100_80g = h100").value();
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:nvidia_h100_80gb_hbm3:8")).gpu, "h100");
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100_80g:8")).gpu, "h100");
  const Decision unknown = decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:a100_40:8"));
  EXPECT_EQ(unknown.verdict, Verdict::kReject);
  EXPECT_NE(unknown.message.find("gpu_alias.a100_40"), std::string::npos) << unknown.message;
}

TEST(Decision, AdviceSpeaksTheAnnotationsSyntax) {
  const Policy policy = parse_policy("refuse_when = likely").value();  // refused on the point figure
  // Llama-3-8B at seq 8192 without recompute on 8 x H100: full recompute fits on the same GPUs.
  Job options = job_of("model=llama3-8b seq=8192 zero=3", "gres:gpu:h100:8");
  const Decision o = decide(policy, options);
  ASSERT_EQ(o.verdict, Verdict::kReject) << o.message;
  EXPECT_NE(o.message.find("(or: --llm-"), std::string::npos) << o.message;
  Job comment = options;
  comment.annotation.face = Face::kComment;
  const Decision c = decide(policy, comment);
  EXPECT_EQ(c.message.find("--llm-"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("(or: "), std::string::npos) << c.message;
}

// A job that fits at no GPU count as it is (min_gpus_to_fit=none) still hears a way out
// when advice has one (several changes at once, more GPUs), and the way out holds: the
// same job with those changes, on the GPUs named, is accepted by the gate itself.
TEST(Decision, AHopelessJobHearsAWayOutThatTheGateAccepts) {
  const Policy policy = parse_policy("").value();
  int offered = 0;
  for (const char* job_spec : {"model=llama3-70b seq=8192", "model=llama3-405b seq=131072",
                               "model=llama3-405b seq=65536 zero=1", "model=llama3-70b seq=32768 micro_batch=2",
                               "model=qwen2.5-72b seq=16384"}) {
    for (const char* gpus : {"gres:gpu:h100:8", "gres:gpu:a100-40gb:64"}) {
      const Decision d = decide(policy, job_of(job_spec, gpus));
      ASSERT_EQ(d.verdict, Verdict::kReject) << job_spec << ": " << d.message;
      if (d.min_gpus != 0) continue;  // not hopeless on these GPUs
      ASSERT_NE(d.message.find("min_gpus_to_fit=none for the likely high end (or: "), std::string::npos)
          << job_spec << ": " << d.message;
      Job changed = job_of(job_spec, "");
      std::string tres;
      for (const Change& change : d.advice) {
        if (change.field == "num_gpus") {
          tres = std::string(gpus).substr(0, std::string(gpus).rfind(':') + 1) + change.value;
          EXPECT_NE(d.message.find(" fits on " + change.value + ")"), std::string::npos) << d.message;
        } else {
          ASSERT_TRUE(apply_key_values(changed.annotation.request, change.field + "=" + change.value).ok()) << change.field;
        }
      }
      changed.fields.per_job = tres.empty() ? gpus : tres;
      const Decision after = decide(policy, changed);
      EXPECT_EQ(after.verdict, Verdict::kAccept) << job_spec << " with " << d.message << ": " << after.message;
      // The CLI's and the API's verdict line offers the same way out.
      Request request = job_of(job_spec, "").annotation.request;
      request.gpu = d.gpu;
      request.num_gpus = d.gpus_requested;
      request.fit_bound = d.min_gpus_bound;  // the gate's bound (resize_to = high)
      const Result<Response> r = respond(request, {});
      ASSERT_TRUE(r.ok()) << job_spec;
      const std::string line = verdict(*r);
      EXPECT_NE(line.find("min_gpus_to_fit=none for the likely high end (or: "), std::string::npos) << line;
      EXPECT_NE(line.find(d.message.substr(d.message.rfind(" fits on "))), std::string::npos) << line << " | " << d.message;
      ++offered;
    }
  }
  EXPECT_GE(offered, 4);
}

TEST(Decision, CheckReportsTheVerdictOnAccept) {
  Job job = job_of("model=llama3-8b zero=3", "gres:gpu:h100:8");
  EXPECT_TRUE(decide(parse_policy("").value(), job).message.empty());
  job.annotation.check = true;
  const Decision d = decide(parse_policy("").value(), job);
  EXPECT_EQ(d.message.rfind("trainfit: fits: llama3-8b", 0), 0u) << d.message;
  EXPECT_NE(d.message.find("min_gpus_to_fit=" + std::to_string(cli_min_gpus("model=llama3-8b zero_stage=3 gpu=h100"))),
            std::string::npos)
      << d.message;
}

// Offload's host RAM per node against the job's memory request: a warning naming both, the
// verdict unchanged. The per-GPU figure comes from respond() on the same request (the CLI's path).
double host_offload_per_gpu(const std::string& spec) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec, ' ').ok());
  Result<Response> r = respond(request, {false, false});
  EXPECT_TRUE(r.ok()) << spec;
  return r.ok() ? r->breakdown.host_offload_per_gpu : -1;
}

TEST(Decision, HostRamForOffloadIsCheckedAgainstTheMemoryRequest) {
  const Policy policy = parse_policy("gpus_per_node = 8").value();
  const char* offload = "model=llama3-8b zero=3 offload_optimizer=true";
  const double per_gpu = host_offload_per_gpu(std::string(offload) + " gpu=h100 num_gpus=16 gpus_per_node=8");
  ASSERT_GT(per_gpu, 0);
  const double need = 8 * per_gpu;  // 16 GPUs on 2 nodes of 8
  Job job = job_of(offload, "gres:gpu:h100:16");
  job.fields.nodes = 2;
  const Decision none = decide(policy, job);  // no --mem: the nodes' whole memory, nothing said
  EXPECT_EQ(none.verdict, Verdict::kAccept);
  EXPECT_TRUE(none.message.empty()) << none.message;
  EXPECT_FALSE(none.host_ram_short);
  EXPECT_NEAR(none.host_ram_per_node_gb, need / kGiB, 1e-6);

  job.memory.per_node_mb = 32 * 1024;  // --mem=32G, less than the offload needs
  const Decision short_mem = decide(policy, job);
  EXPECT_EQ(short_mem.verdict, Verdict::kAccept);  // a warning, never a refusal by itself
  EXPECT_TRUE(short_mem.host_ram_short);
  EXPECT_DOUBLE_EQ(short_mem.memory_per_node_gb, 32.0);
  EXPECT_EQ(short_mem.message.rfind("trainfit: warning: offload needs " + format_gib(need) + " GiB of host RAM per node (8 GPUs x ", 0), 0u)
      << short_mem.message;
  EXPECT_NE(short_mem.message.find("more than the job's 32.0 GiB per node (--mem=32768M)"), std::string::npos) << short_mem.message;

  job.memory = JobMemory{0, 2048, 8};  // --mem-per-cpu=2G with 8 CPUs per node: 16 GiB
  const Decision per_cpu = decide(policy, job);
  EXPECT_DOUBLE_EQ(per_cpu.memory_per_node_gb, 16.0);
  EXPECT_NE(per_cpu.message.find("(--mem-per-cpu=2048M x 8 CPUs)"), std::string::npos) << per_cpu.message;

  job.memory = JobMemory{static_cast<int64_t>(need / (1 << 20)) + 1, 0, 1};  // just enough
  EXPECT_FALSE(decide(policy, job).host_ram_short);
  EXPECT_TRUE(decide(policy, job).message.empty());

  Job rejected = job_of(kBig, "gres:gpu:h100:8");  // no offload: no figure, the refusal unchanged
  rejected.memory.per_node_mb = 1024;
  EXPECT_EQ(decide(policy, rejected).host_ram_per_node_gb, 0);
  EXPECT_EQ(decide(policy, rejected).message.find("host RAM"), std::string::npos);
}

TEST(Decision, HeadroomShrinksCapacity) {
  const Policy none = parse_policy("").value();
  const Policy kept = parse_policy("headroom = 0.1").value();
  const Job job = job_of("model=llama3-8b zero=3", "gres:gpu:h100:8");
  EXPECT_NEAR(decide(kept, job).capacity_gb, 0.9 * decide(none, job).capacity_gb, 1e-9);
}

TEST(Decision, UntypedGpusUseThePartitionDefault) {
  const Policy policy = parse_policy("default_gpu = a100-40gb\npartition.big.default_gpu = h200").value();
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:8")).gpu, "a100-40gb");
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:8", "big")).gpu, "h200");
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", "big")).gpu, "h100");
}

TEST(Decision, StepsAreNeverResized) {
  const Policy policy = parse_policy("action = resize").value();
  Job step = job_of(kBig, "gres:gpu:h100:8");
  step.step = true;
  EXPECT_EQ(decide(policy, step).verdict, Verdict::kReject);
}

TEST(Review, GpuSharesNeedAnAnnotationWhereOneIsRequired) {
  const Policy policy = parse_policy("partition.llm.require_annotation = true").value();
  for (const char* gres : {"gres:shard:4", "gres/mps:100"}) {
    Job job;
    job.fields.per_node = gres;
    job.partition = "llm";
    EXPECT_EQ(decide(policy, job).reason, Reason::kAnnotationRequired) << gres;
  }
}

TEST(Review, ResizeNeverLowersNodesNorPassesItsLimit) {
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8\nresize_max_gpus = 64").value();
  Job job = job_of(kBig, "");
  job.fields.per_node = "gres:gpu:h100:2";
  job.fields.nodes = 4;  // -N 4 --gpus-per-node=2
  const Decision d = decide(policy, job);
  ASSERT_EQ(d.verdict, Verdict::kResize) << d.message;
  EXPECT_GE(d.new_nodes, 4);
  EXPECT_GE(granted_by_slurm(job, d), d.resized_to);
  const Policy tight = parse_policy("action = resize\ngpus_per_node = 8\nresize_max_gpus = 24").value();
  Job odd = job_of(kBig, "");
  odd.fields.per_task = "gres:gpu:h100:5";  // 5 per task: 24 GPUs round up to 25
  odd.fields.tasks = 1;
  const Decision o = decide(tight, odd);
  EXPECT_EQ(o.verdict, Verdict::kReject) << o.message;
  EXPECT_NE(o.message.find("resize limit of 24"), std::string::npos) << o.message;
}

TEST(Review, ResizeKeepsTheGresTypeAsWritten) {
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8").value();
  const Decision d = decide(policy, job_of(kBig, "gres:gpu:H100:8"));
  ASSERT_EQ(d.verdict, Verdict::kResize);
  EXPECT_EQ(d.new_tres_per_job, "gres:gpu:H100:" + std::to_string(d.resized_to));
}

TEST(Review, AJobAskingNoGpusGetsItsRealMinimum) {
  const Decision d = decide(parse_policy("").value(), job_of("model=gpt2", ""));
  EXPECT_EQ(d.reason, Reason::kGpuRequest);
  EXPECT_EQ(d.message.find("min_gpus_to_fit=none"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace trainfit::admission
