// Admission logic the Slurm plugins run: GRES parsing, annotations, policy, decisions, audit.
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

struct Spelling {
  const char* text;
  int64_t gpus;
  const char* type;
};

class GresSpelling : public ::testing::TestWithParam<Spelling> {};

TEST_P(GresSpelling, ParsesEveryVersionsSpelling) {
  Result<TresList> list = parse_tres(GetParam().text);
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->gpus, GetParam().gpus) << GetParam().text;
  EXPECT_EQ(list->gpu_type, GetParam().type) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, GresSpelling,
    ::testing::Values(Spelling{"gpu:8", 8, ""}, Spelling{"gres:gpu:8", 8, ""}, Spelling{"gres/gpu:8", 8, ""},
                      Spelling{"gres/gpu=8", 8, ""}, Spelling{"gres:gpu:h100:8", 8, "h100"},
                      Spelling{"gres/gpu:h100=4", 4, "h100"}, Spelling{"gpu:A100:2", 2, "a100"},
                      Spelling{"gres:gpu:2,gres:gpu:1", 3, ""}, Spelling{"gres:nvme:1,gres:gpu:h100:8", 8, "h100"},
                      Spelling{"gres/gpu", 1, ""}, Spelling{"gres:gpu:h200", 1, "h200"},
                      Spelling{"cpu=4;gres/gpu:h100=8", 8, "h100"}, Spelling{"", 0, ""}));

TEST(Gres, BadCountsAreNamed) {
  EXPECT_NE(parse_tres("gres:gpu:h100:x:8").error().message.find("more than one GPU type"), std::string::npos);
  EXPECT_NE(parse_tres("gres/gpu=-1").error().message.find("count '-1'"), std::string::npos);
  EXPECT_NE(parse_tres("gres/gpu=99999999999").error().message.find("accepted"), std::string::npos);
}

TEST(Gres, TotalsOverJobFields) {
  JobGpuFields f;
  f.per_node = "gres:gpu:h100:4";
  f.nodes = 3;
  EXPECT_EQ(total_gpus(f)->gpus, 12);
  EXPECT_EQ(total_gpus(f)->type, "h100");
  f.per_job = "gres:gpu:16";  // --gpus wins
  EXPECT_EQ(total_gpus(f)->gpus, 16);
  JobGpuFields tasks;
  tasks.per_task = "gres:gpu:1";
  tasks.tasks = 8;
  EXPECT_EQ(total_gpus(tasks)->gpus, 8);
  JobGpuFields sockets;
  sockets.per_socket = "gres:gpu:2";
  sockets.sockets_per_node = 2;
  sockets.nodes = 2;
  EXPECT_EQ(total_gpus(sockets)->gpus, 8);
  EXPECT_EQ(total_gpus(JobGpuFields{})->gpus, 0);
}

TEST(Gres, RewriteKeepsOtherEntries) {
  EXPECT_EQ(rewrite_tres(parse_tres("gres:nvme:1,gres:gpu:h100:8").value(), "h100", 16),
            "gres:nvme:1,gres:gpu:h100:16");
  EXPECT_EQ(rewrite_tres(parse_tres("gres/gpu=8").value(), "", 4), "gres:gpu:4");
}

TEST(Annotation, FromSpankEnvironment) {
  Request r;
  bool found = false;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-70b",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_micro_batch=2",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=sequence_parallel=true,cp=2",
                                         "_SLURM_SPANK_OPTION_other_plugin_x=1"},
                                        &r, &found)
                  .ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(*r.model, "llama3-70b");
  EXPECT_EQ(*r.seq_length, 8192);
  EXPECT_EQ(*r.micro_batch, 2);
  EXPECT_TRUE(*r.sequence_parallel);
  EXPECT_EQ(*r.context_parallel, 2);
}

TEST(Annotation, GeometryFromHfConfigThenOptions) {
  Request r;
  bool found = false;
  ASSERT_TRUE(annotation_from_spank_env({"TRAINFIT_GEOMETRY=num_layers=32,hidden_dim=4096,num_heads=32",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=num_layers=16"},
                                        &r, &found)
                  .ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(*r.num_layers, 16);
  EXPECT_EQ(*r.hidden_dim, 4096);
}

TEST(Annotation, NoTrainfitOptionsMeansNotFound) {
  Request r;
  bool found = true;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_pyxis_image=x"}, &r, &found).ok());
  EXPECT_FALSE(found);
}

TEST(Annotation, FromComment) {
  Request r;
  bool found = false;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-70b seq=8192 zero=3  llm-recompute=full tp=2",
                                      &r, &found)
                  .ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(*r.zero_stage, 3);
  EXPECT_EQ(*r.recompute, "full");
  EXPECT_EQ(*r.tensor_parallel, 2);
  Request other;
  ASSERT_TRUE(annotation_from_comment("nightly eval run", &other, &found).ok());
  EXPECT_FALSE(found);
}

TEST(Annotation, ErrorsNameTheOption) {
  Request r;
  bool found = false;
  EXPECT_NE(annotation_from_comment("trainfit: seq=abc", &r, &found).error().message.find("--llm-seq='abc'"),
            std::string::npos);
  EXPECT_NE(annotation_from_comment("trainfit: model", &r, &found).error().message.find("not key=value"),
            std::string::npos);
  EXPECT_NE(annotation_from_comment("trainfit: colour=red", &r, &found).error().message.find("unknown field"),
            std::string::npos);
  EXPECT_NE(annotation_from_comment("trainfit: hf-config=/x.json", &r, &found).error().message.find("submit host"),
            std::string::npos);
}

TEST(Policy, ParsesAndValidates) {
  Result<Policy> p = parse_policy(
      "# site policy\naction = resize\nresize_max_gpus = 32\nheadroom = 0.05\ndefault_gpu = A100\n"
      "partition.debug.action = warn\naudit_log = /var/log/x.jsonl\non_error = closed\n");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->defaults.action, Action::kResize);
  EXPECT_EQ(p->defaults.default_gpu, "a100");
  EXPECT_FALSE(p->fail_open);
  EXPECT_EQ(p->for_partition("debug").action, Action::kWarn);
  EXPECT_EQ(p->for_partition("debug").resize_max_gpus, 32);  // inherits the defaults
  EXPECT_EQ(p->for_partition("other").action, Action::kResize);
}

TEST(Policy, MistakesGetOneLineWithTheLine) {
  auto message = [](const char* text) { return parse_policy(text).error().message; };
  EXPECT_NE(message("action = deny").find("line 1: action='deny' is not valid; accepted: reject|resize|warn"),
            std::string::npos);
  EXPECT_NE(message("\nheadroom = 2").find("line 2: headroom='2'"), std::string::npos);
  EXPECT_NE(message("actoin = reject").find("did you mean 'action'"), std::string::npos);
  EXPECT_NE(message("default_gpu = h1000").find("did you mean 'h100'"), std::string::npos);
  EXPECT_NE(message("audit_log = relative.log").find("absolute path"), std::string::npos);
  EXPECT_NE(message("on_error = maybe").find("open|closed"), std::string::npos);
  EXPECT_NE(message("partition.gpu.colour = red").find("unknown partition key"), std::string::npos);
  EXPECT_NE(message("just words").find("not key = value"), std::string::npos);
}

Job job_of(const std::string& annotation, const std::string& tres_per_job, const std::string& partition = "") {
  Job job;
  bool found = false;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &job.annotation, &found).ok());
  job.annotated = found;
  job.fields.per_job = tres_per_job;
  job.gpus = total_gpus(job.fields).value();
  job.partition = partition;
  return job;
}

const char* kBig = "model=llama3-70b seq=8192 zero=3 recompute=full";

TEST(Decision, AcceptRejectWarnResize) {
  Policy policy = parse_policy("gpus_per_node = 8\npartition.elastic.action = resize\npartition.soft.action = warn")
                      .value();
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8")).verdict, Verdict::kAccept);
  const Decision reject = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  EXPECT_EQ(reject.verdict, Verdict::kReject);
  EXPECT_EQ(reject.message.rfind("trainfit: llama3-70b at seq 8192 needs ", 0), 0u) << reject.message;
  EXPECT_NE(reject.message.find("on 8 x H100 (79.6 GiB usable); min_gpus_to_fit=24"), std::string::npos)
      << reject.message;
  EXPECT_EQ(decide(policy, job_of(kBig, "gres:gpu:h100:8", "soft")).verdict, Verdict::kWarn);
  const Decision resize = decide(policy, job_of(kBig, "gres:gpu:h100:8", "elastic"));
  EXPECT_EQ(resize.verdict, Verdict::kResize);
  EXPECT_EQ(resize.resized_to, 24);
  EXPECT_EQ(resize.new_tres_per_job, "gres:gpu:h100:24");
  EXPECT_EQ(resize.new_nodes, 3);
  EXPECT_NE(resize.message.find("global batch 8 -> 24"), std::string::npos) << resize.message;
}

TEST(Decision, ResizeRespectsTheMaximumAndGpusPerNode) {
  Policy policy = parse_policy("action = resize\nresize_max_gpus = 16\ngpus_per_node = 8").value();
  const Decision d = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_NE(d.message.find("resize limit of 16"), std::string::npos) << d.message;
  Job per_node = job_of(kBig, "");
  per_node.fields.per_node = "gres:gpu:h100:8";
  per_node.fields.nodes = 1;
  per_node.gpus = total_gpus(per_node.fields).value();
  Policy big = parse_policy("action = resize\ngpus_per_node = 8").value();
  const Decision nodes = decide(big, per_node);
  EXPECT_EQ(nodes.verdict, Verdict::kResize);
  EXPECT_EQ(nodes.new_tres_per_node, "gres:gpu:h100:8");
  EXPECT_EQ(nodes.new_nodes * 8, nodes.resized_to);
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
  const Decision unknown = decide(policy, job_of("model=llama3-8b", "gres:gpu:rtx9000:8"));
  EXPECT_EQ(unknown.verdict, Verdict::kReject);
  EXPECT_NE(unknown.message.find("rtx9000"), std::string::npos);
}

TEST(Decision, UnannotatedJobsPassUnlessRequired) {
  Job plain;
  plain.fields.per_job = "gres:gpu:8";
  plain.gpus = total_gpus(plain.fields).value();
  const Policy policy = parse_policy("partition.strict.require_annotation = true").value();
  EXPECT_EQ(decide(policy, plain).verdict, Verdict::kPass);
  plain.partition = "strict";
  EXPECT_EQ(decide(policy, plain).verdict, Verdict::kReject);
}

TEST(Decision, InvalidAnnotationAndNoGpus) {
  const Policy policy = parse_policy("").value();
  const Decision bad = decide(policy, job_of("model=llama3-8b tp=3", "gres:gpu:h100:8"));
  EXPECT_EQ(bad.verdict, Verdict::kReject);
  EXPECT_NE(bad.message.find("tensor_parallel=3"), std::string::npos) << bad.message;
  const Decision none = decide(policy, job_of("model=llama3-8b zero=3", ""));
  EXPECT_EQ(none.verdict, Verdict::kReject);
  EXPECT_NE(none.message.find("requests no GPUs"), std::string::npos);
}

TEST(Audit, OneJsonLinePerRecordAppended) {
  AuditRecord record;
  record.time = 1764633600;
  record.uid = 1000;
  record.user = "alice";
  record.job_name = std::string("bad\xff name");  // invalid UTF-8 from a user: replaced, not thrown
  record.gpus_requested = 8;
  record.decision = decide(parse_policy("").value(), job_of(kBig, "gres:gpu:h100:8"));
  const std::string line = audit_json(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["time"], "2025-12-02T00:00:00Z");
  EXPECT_EQ(j["action"], "reject");
  EXPECT_EQ(j["min_gpus_to_fit"], record.decision.min_gpus);
  EXPECT_TRUE(j["resized_to"].is_null());
  char path[] = "/tmp/trainfit-audit-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(append_line(path, line), "");
  EXPECT_EQ(append_line(path, line), "");
  std::ifstream in(path);
  int lines = 0;
  for (std::string text; std::getline(in, text);) ++lines;
  EXPECT_EQ(lines, 2);
  unlink(path);
  EXPECT_NE(append_line("/nonexistent-dir/audit.jsonl", line).find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace trainfit::admission

namespace trainfit::admission {
namespace {

TEST(SrunArgs, TheStepsOwnRequestReplacesTheAllocations) {
  JobGpuFields inherited;
  inherited.per_job = "gpu:h100:8";
  JobGpuFields f = inherited;
  apply_srun_args({"srun", "--gpus=h100:2", "--llm-model=llama3-8b", "python", "--gpus=9"}, &f);
  EXPECT_EQ(total_gpus(f)->gpus, 2);
  f = inherited;
  apply_srun_args({"srun", "-G", "4", "true"}, &f);
  EXPECT_EQ(total_gpus(f)->gpus, 4);
  f = inherited;
  apply_srun_args({"srun", "-N2", "--gpus-per-node=2", "true"}, &f);
  EXPECT_EQ(total_gpus(f)->gpus, 4);
  f = inherited;
  apply_srun_args({"srun", "-n", "3", "--gpus-per-task", "1", "true"}, &f);
  EXPECT_EQ(total_gpus(f)->gpus, 3);
  f = inherited;
  apply_srun_args({"srun", "--llm-model=llama3-8b", "hostname", "-G", "1"}, &f);
  EXPECT_EQ(total_gpus(f)->gpus, 8);  // no step request: the allocation's GPUs
}

}  // namespace
}  // namespace trainfit::admission
