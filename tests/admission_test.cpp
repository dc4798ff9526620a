// Admission logic the Slurm plugins run: GPU requests, srun options, annotations,
// policy, decisions (partition lists, resizes, exemptions, updates), audit records,
// file reading and log escaping. Expected values come from the request itself or from
// respond() on the same request (the CLI's path), never from decide()'s own output.
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

namespace trainfit::admission {
namespace {

using testing::failure_of;

// ---- GPU requests ----

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
  EXPECT_EQ(list->gpu_types.empty() ? "" : list->gpu_types.front(), GetParam().type) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, GresSpelling,
    ::testing::Values(Spelling{"gpu:8", 8, ""}, Spelling{"gres:gpu:8", 8, ""}, Spelling{"gres/gpu:8", 8, ""},
                      Spelling{"gres/gpu=8", 8, ""}, Spelling{"gres:gpu:h100:8", 8, "h100"},
                      Spelling{"gres/gpu:h100=4", 4, "h100"}, Spelling{"gpu:A100:2", 2, "A100"},
                      Spelling{"gres:gpu:2,gres:gpu:1", 3, ""}, Spelling{"gres:nvme:1,gres:gpu:h100:8", 8, "h100"},
                      Spelling{"gres/gpu", 1, ""}, Spelling{"gres:gpu:h200", 1, "h200"},
                      Spelling{"cpu=4;gres/gpu:h100=8", 8, "h100"}, Spelling{"", 0, ""},
                      Spelling{"gres:gpu:nvidia_h100_80gb_hbm3:8", 8, "nvidia_h100_80gb_hbm3"}));

TEST(Gres, BadCountsAreNamed) {
  // Each a value of the GPU request; the message says which mistake (all three are kInvalidValue).
  for (const auto& [text, says] : {std::make_pair("gres:gpu:h100:x:8", "more than one GPU type"),
                                   std::make_pair("gres/gpu=-1", "count '-1'"),
                                   std::make_pair("gres/gpu=99999999999", "at most 1048576")}) {
    const Error e = failure_of(parse_tres(text));
    EXPECT_EQ(e.code, ErrorCode::kInvalidValue) << text << ": " << e.message;
    EXPECT_EQ(e.field, "gres") << text << ": " << e.message;
    EXPECT_NE(e.message.find(says), std::string::npos) << text << ": " << e.message;
  }
}

TEST(Gres, MixedTypesAreAllKept) {
  Result<TresList> list = parse_tres("gres:gpu:a100:2,gres:gpu:h100:2");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->gpus, 4);
  EXPECT_EQ(list->gpu_types, (std::vector<std::string>{"a100", "h100"}));
}

TEST(Gres, TotalsOverJobFields) {
  JobGpuFields f;
  f.per_node = "gres:gpu:h100:4";
  f.nodes = 3;
  EXPECT_EQ(total_gpus(f)->gpus, 12);
  EXPECT_EQ(total_gpus(f)->types.front(), "h100");
  f.per_job = "gres:gpu:16";  // --gpus wins
  EXPECT_EQ(total_gpus(f)->gpus, 16);
  EXPECT_EQ(total_gpus(f)->written, "--gpus=gres:gpu:16");
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

TEST(Gres, HugeRequestsAreGpuRequestErrorsWithoutOverflow) {
  // --gpus-per-socket=16777216 --sockets-per-node=65000 -N 2147483647
  JobGpuFields f;
  f.per_socket = "gres:gpu:16777216";
  f.sockets_per_node = 65000;
  f.nodes = 2147483647;
  Result<GpuTotal> total = total_gpus(f);
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.error().code, ErrorCode::kInvalidValue) << total.error().message;
  EXPECT_EQ(total.error().field, "gres") << total.error().message;
  f.per_socket = "gres:gpu:1";  // 1 x 65000 x 2147483647 would overflow 32 bits and more
  total = total_gpus(f);
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.error().code, ErrorCode::kInvalidValue) << total.error().message;
  EXPECT_EQ(total.error().field, "gres") << total.error().message;
  EXPECT_NE(total.error().message.find("more than 1048576"), std::string::npos) << total.error().message;
  JobGpuFields job;
  job.per_job = "gres:gpu:16777216";  // --gpus=16777216
  const Error e = failure_of(total_gpus(job));
  EXPECT_EQ(e.code, ErrorCode::kInvalidValue) << e.message;
  EXPECT_EQ(e.field, "gres") << e.message;
  EXPECT_NE(e.message.find("16777216"), std::string::npos) << e.message;  // the count asked for, quoted
}

// ---- srun steps: the step's own GPU options among every other option ----

struct StepCase {
  std::vector<std::string> gpu_option;  // one spelling of "16 GPUs"
  int64_t gpus;
};

class SrunStep : public ::testing::TestWithParam<StepCase> {};

TEST_P(SrunStep, FindsTheGpuOptionAmongOptionsWithSeparateValues) {
  const std::vector<std::vector<std::string>> neighbours = {
      {"--mpi", "pmix"},  {"-w", "n1"},        {"--container-image", "nvcr.io/nvidia/pytorch:24.01"},
      {"-p", "gpu"},      {"--exclusive"},     {"-l"},
      {"--time", "10"},   {"-J", "train"},     {"--comment", "--gpus=5"},
      {"--export=ALL"},   {"-c", "8"},         {"--container-mounts", "/data:/data"}};
  for (const auto& before : neighbours) {
    for (const auto& after : neighbours) {
      std::vector<std::string> options = before;
      options.insert(options.end(), GetParam().gpu_option.begin(), GetParam().gpu_option.end());
      options.insert(options.end(), after.begin(), after.end());
      JobGpuFields f;
      f.per_job = "gpu:h100:8";  // the allocation's
      f.nodes = 1;
      ASSERT_TRUE(apply_srun_options(options, &f));
      std::string line;
      for (const std::string& o : options) line += o + " ";
      EXPECT_EQ(total_gpus(f)->gpus, GetParam().gpus) << line;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Spellings, SrunStep,
    ::testing::Values(StepCase{{"--gpus=16"}, 16}, StepCase{{"--gpus", "16"}, 16}, StepCase{{"-G", "16"}, 16},
                      StepCase{{"-G16"}, 16}, StepCase{{"--gpus=h100:16"}, 16}, StepCase{{"-G", "h100:16"}, 16},
                      StepCase{{"--gres=gpu:16"}, 16}, StepCase{{"--gres", "gpu:h100:16"}, 16},
                      StepCase{{"--gpus-per-node=16"}, 16}, StepCase{{"--gpus-per-node", "16"}, 16}));

TEST(SrunStep, NoGpuOptionKeepsTheAllocation) {
  JobGpuFields f;
  f.per_job = "gpu:h100:8";
  EXPECT_FALSE(apply_srun_options({"--mpi", "pmix", "--comment", "--gpus=5", "-l"}, &f));
  EXPECT_EQ(total_gpus(f)->gpus, 8);
}

TEST(SrunStep, PerTaskGpusUseTheStepsTasks) {
  JobGpuFields f;
  f.per_job = "gpu:h100:8";
  f.tasks = 3;  // S_JOB_TOTAL_TASK_COUNT
  ASSERT_TRUE(apply_srun_options({"-n", "3", "--gpus-per-task", "1"}, &f));
  EXPECT_EQ(total_gpus(f)->gpus, 3);
}

// ---- Annotations ----

TEST(Annotation, FromSpankEnvironment) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-70b",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_micro_batch=2",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=sequence_parallel=true,cp=2",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_check=",
                                         "_SLURM_SPANK_OPTION_other_plugin_x=1"},
                                        &a)
                  .ok());
  EXPECT_TRUE(a.found);
  EXPECT_TRUE(a.check);
  EXPECT_EQ(*a.request.model, "llama3-70b");
  EXPECT_EQ(*a.request.seq_length, 8192);
  EXPECT_EQ(*a.request.micro_batch, 2);
  EXPECT_TRUE(*a.request.sequence_parallel);
  EXPECT_EQ(*a.request.context_parallel, 2);
  EXPECT_EQ(spank_env_name("micro-batch"), "_SLURM_SPANK_OPTION_trainfit_llm_micro_batch");
}

TEST(Annotation, GeometryFromHfConfigThenOptions) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"TRAINFIT_GEOMETRY=num_layers=32,hidden_dim=4096,num_heads=32",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=num_layers=16"},
                                        &a)
                  .ok());
  EXPECT_EQ(*a.request.num_layers, 16);
  EXPECT_EQ(*a.request.hidden_dim, 4096);
}

// sbatch --llm-model=X --llm-hf-config=F: two whole geometries, one would silently win; the
// same check in sbatch and job_submit (both read the annotation here), in sbatch's words.
TEST(Annotation, ModelAndHfConfigAreRefusedNamingBoth) {
  Annotation a;
  Result<bool> r = annotation_from_spank_env({"TRAINFIT_GEOMETRY=num_layers=28,hidden_dim=3584,num_heads=28",
                                              "_SLURM_SPANK_OPTION_trainfit_llm_hf_config=qwen.json",
                                              "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-8b"},
                                             &a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
  EXPECT_EQ(r.error().field, "model") << r.error().message;
  EXPECT_NE(r.error().message.find("--llm-model='llama3-8b'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--llm-hf-config='qwen.json'"), std::string::npos) << r.error().message;
  Annotation fields;  // single geometry fields over a model are overrides, not a second geometry
  EXPECT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-8b",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=num_layers=16"},
                                        &fields)
                  .ok());
}

TEST(Annotation, NoTrainfitOptionsMeansNotFound) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_pyxis_image=x"}, &a).ok());
  EXPECT_FALSE(a.found);
}

TEST(Annotation, OneFieldTwoValuesIsAnErrorNamingBothInEitherOrder) {
  for (const auto& env : {std::vector<std::string>{"_SLURM_SPANK_OPTION_trainfit_llm_zero=3",
                                                   "_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=0"},
                          std::vector<std::string>{"_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=0",
                                                   "_SLURM_SPANK_OPTION_trainfit_llm_zero=3"}}) {
    Annotation a;
    Result<bool> r = annotation_from_spank_env(env, &a);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
    EXPECT_EQ(r.error().field, "zero_stage") << r.error().message;
    EXPECT_NE(r.error().message.find("--llm-zero=3"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("--llm-spec=zero_stage=0"), std::string::npos) << r.error().message;
  }
  Annotation same;  // the same value twice is no contradiction
  EXPECT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_zero=3",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=3"},
                                        &same)
                  .ok());
  Annotation comment;
  Result<bool> r = annotation_from_comment("trainfit: zero=3 zero_stage=0", &comment);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
  EXPECT_EQ(r.error().field, "zero_stage") << r.error().message;
  EXPECT_NE(r.error().message.find("zero=3 and zero_stage=0 disagree"), std::string::npos) << r.error().message;
}

TEST(Annotation, FromComment) {
  Annotation a;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-70b seq=8192 zero=3  llm-recompute=full tp=2 check", &a).ok());
  EXPECT_TRUE(a.found);
  EXPECT_TRUE(a.check);
  EXPECT_EQ(a.face, Face::kComment);
  EXPECT_EQ(*a.request.zero_stage, 3);
  EXPECT_EQ(*a.request.recompute, "full");
  EXPECT_EQ(*a.request.tensor_parallel, 2);
  Annotation other;
  ASSERT_TRUE(annotation_from_comment("nightly eval run", &other).ok());
  EXPECT_FALSE(other.found);
}

// The framework works in every face, and the gate decides in that framework's words:
// torchtitan's "selective" is op-level checkpointing, Megatron's is core attention.
TEST(Annotation, FrameworkInEveryFace) {
  Annotation option;
  ASSERT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_framework=torchtitan",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_recompute=selective"},
                                        &option)
                  .ok());
  EXPECT_EQ(*option.request.framework, "torchtitan");
  Annotation comment;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-8b framework=megatron recompute=selective", &comment).ok());
  EXPECT_EQ(*comment.request.framework, "megatron");
  option.request.model = "llama3-8b";
  Result<Resolved> titan = resolve(option.request);
  Result<Resolved> megatron = resolve(comment.request);
  ASSERT_TRUE(titan.ok() && megatron.ok());
  EXPECT_EQ(titan->config.recompute, Recompute::kOp);
  EXPECT_EQ(megatron->config.recompute, Recompute::kSelective);
}

TEST(Annotation, ErrorsSpeakTheSyntaxTheUserWrote) {
  Annotation a;
  // The field is the request's (seq_length) whichever spelling the user wrote; the message is theirs.
  const Error comment = failure_of(annotation_from_comment("trainfit: seq=abc", &a));
  EXPECT_EQ(comment.code, ErrorCode::kInvalidValue) << comment.message;
  EXPECT_EQ(comment.field, "seq_length") << comment.message;
  EXPECT_EQ(comment.message.rfind("seq='abc' is not valid; accepted: integer", 0), 0u) << comment.message;
  EXPECT_EQ(comment.message.find("--llm"), std::string::npos) << comment.message;
  const Error option = failure_of(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_seq=abc"}, &a));
  EXPECT_EQ(option.code, ErrorCode::kInvalidValue) << option.message;
  EXPECT_EQ(option.field, "seq_length") << option.message;
  EXPECT_EQ(option.message.rfind("--llm-seq='abc' is not valid; accepted: integer", 0), 0u) << option.message;
  const Error bare = failure_of(annotation_from_comment("trainfit: model", &a));
  EXPECT_EQ(bare.code, ErrorCode::kMalformed) << bare.message;
  EXPECT_EQ(bare.field, "model") << bare.message;
  const Error unknown = failure_of(annotation_from_comment("trainfit: colour=red", &a));
  EXPECT_EQ(unknown.code, ErrorCode::kUnknownField) << unknown.message;
  EXPECT_EQ(unknown.field, "colour") << unknown.message;
  const Error file = failure_of(annotation_from_comment("trainfit: hf-config=/x.json", &a));
  EXPECT_EQ(file.code, ErrorCode::kInvalidValue) << file.message;
  EXPECT_EQ(file.field, "hf-config") << file.message;
  EXPECT_NE(file.message.find("submit host"), std::string::npos) << file.message;  // where to give it instead
}

// ---- Policy ----

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

TEST(Policy, EnumeratedValuesIgnoreCase) {
  Result<Policy> p = parse_policy("on_error = Closed\naction = Warn\nrequire_annotation = TRUE");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->fail_open);
  EXPECT_EQ(p->defaults.action, Action::kWarn);
  EXPECT_TRUE(p->defaults.require_annotation);
}

TEST(Policy, OnErrorIsReadAsAKeyEvenFromAnInvalidFile) {
  EXPECT_TRUE(fail_open_of("# we never run closed here\naction = reject"));
  EXPECT_TRUE(fail_open_of("action = deny  # closed for maintenance?"));
  EXPECT_FALSE(fail_open_of("action = deny\non_error = closed"));
  EXPECT_FALSE(fail_open_of("ON_ERROR = Closed   # really"));
  EXPECT_TRUE(fail_open_of("on_error = closed\non_error = open"));  // the last one counts, as in parse_policy
  EXPECT_TRUE(fail_open_of("on_errors = closed"));
}

struct PolicyMistake {
  const char* text;
  int line;             // the line of trainfit.conf at fault
  const char* field;    // its key ("trainfit.conf" where the error names no key)
  ErrorCode code;
  const char* reason;   // words of the reason the user is promised ("" where code and field say it all)
};

void PrintTo(const PolicyMistake& c, std::ostream* os) { *os << ::testing::PrintToString(std::string(c.text)); }

class PolicyMistakes : public ::testing::TestWithParam<PolicyMistake> {};

TEST_P(PolicyMistakes, GetOneLineWithTheLineAndTheKey) {
  const PolicyMistake& c = GetParam();
  const Error e = failure_of(parse_policy(c.text));
  EXPECT_EQ(e.code, c.code) << e.message;
  EXPECT_EQ(e.field, c.field) << e.message;
  EXPECT_EQ(e.line, c.line) << e.message;
  EXPECT_EQ(e.message, "trainfit.conf line " + std::to_string(c.line) + ": " + e.reason);
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  EXPECT_NE(e.reason.find(c.reason), std::string::npos) << e.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Policy, PolicyMistakes,
    ::testing::Values(
        PolicyMistake{"action = deny", 1, "action", ErrorCode::kInvalidValue, "accepted: reject|resize|warn"},
        PolicyMistake{"\nheadroom = 2", 2, "headroom", ErrorCode::kInvalidValue, ""},
        PolicyMistake{"actoin = reject", 1, "trainfit.conf", ErrorCode::kInvalidValue, "did you mean 'action'"},
        PolicyMistake{"default_gpu = h1000", 1, "default_gpu", ErrorCode::kInvalidValue, "did you mean 'h100'"},
        PolicyMistake{"audit_log = relative.log", 1, "audit_log", ErrorCode::kInvalidValue, "absolute path"},
        PolicyMistake{"on_error = maybe", 1, "on_error", ErrorCode::kInvalidValue, "open|closed"},
        PolicyMistake{"action = warn\npartition.gpu.colour = red", 2, "trainfit.conf", ErrorCode::kInvalidValue,
                      "unknown partition key 'colour'"},
        PolicyMistake{"partition.gpu.action = deny", 1, "action", ErrorCode::kInvalidValue,
                      "partition gpu: action='deny'"},
        PolicyMistake{"just words", 1, "trainfit.conf", ErrorCode::kInvalidValue, "not key = value"},
        PolicyMistake{"gpu_alias.x = h1000", 1, "trainfit.conf", ErrorCode::kInvalidValue, "gpu_alias.x"},
        PolicyMistake{"# site\n\nexempt_users = alice,,bob", 3, "exempt_users", ErrorCode::kInvalidValue,
                      "empty entry"}));

std::optional<uint32_t> fake_passwd(const std::string& name) {
  if (name == "alice") return 1001u;
  return std::nullopt;
}

TEST(Policy, ExemptUsersResolveToUids) {
  Policy p = parse_policy("exempt_users = alice, 2002, mallory\npartition.gpu.exempt_users = alice").value();
  const std::vector<std::string> unknown = resolve_exempt_users(p, fake_passwd);
  EXPECT_EQ(unknown, std::vector<std::string>{"mallory"});
  EXPECT_EQ(p.defaults.exempt_uids, (std::set<uint32_t>{1001, 2002}));
  EXPECT_EQ(p.for_partition("gpu").exempt_uids, std::set<uint32_t>{1001});
}

TEST(Policy, GpuNamesAsClustersSpellThem) {
  const Policy p = parse_policy("gpu_alias.h100_80g = h100\ngpu_alias.A100_40 = a100-40gb").value();
  EXPECT_EQ(catalog_gpu(p, "h100_80g").value()->name, "h100");
  EXPECT_EQ(catalog_gpu(p, "a100_40").value()->name, "a100-40gb");
  EXPECT_EQ(catalog_gpu(p, "H100").value()->name, "h100");
  // Slurm's AutoDetect=nvml names: NVML's product name, lower case, spaces as '_'.
  EXPECT_EQ(catalog_gpu(p, "nvidia_h100_80gb_hbm3").value()->name, "h100");
  EXPECT_EQ(catalog_gpu(p, "nvidia_a100-sxm4-80gb").value()->name, "a100");
  EXPECT_EQ(catalog_gpu(p, "nvidia_a100-sxm4-40gb").value()->name, "a100-40gb");
  const Result<const GpuSpec*> unknown = catalog_gpu(p, "rtx9000");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnknownName) << unknown.error().message;
  EXPECT_EQ(unknown.error().field, "gpu") << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("gpu_alias.rtx9000 = "), std::string::npos) << unknown.error().message;
}

// ---- Decisions ----

Job job_of(const std::string& annotation, const std::string& tres_per_job, const std::string& partition = "") {
  Job job;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &job.annotation).ok());
  job.annotation.face = Face::kOptions;  // as if given with --llm-* options
  job.fields.per_job = tres_per_job;
  job.partition = partition;
  return job;
}

// min_gpus_to_fit as the CLI computes it for the same request.
int64_t cli_min_gpus(const std::string& spec) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec, ' ').ok());
  Result<Response> r = respond(request, {false, false});
  EXPECT_TRUE(r.ok()) << spec;
  return r.ok() ? r->min_gpus.gpus : -1;
}

// The GPUs Slurm gives a job: TresPerJob, else TresPerNode x NumNodes, else TresPerTask x NumTasks.
int64_t granted_by_slurm(const Job& job, const Decision& d) {
  const int64_t nodes = d.new_nodes > 0 ? d.new_nodes : std::max<int64_t>(1, job.fields.nodes);
  const int64_t tasks = d.new_tasks > 0 ? d.new_tasks : std::max<int64_t>(1, job.fields.tasks);
  auto count = [](const std::string& text) { return parse_tres(text).ok() ? parse_tres(text)->gpus : 0; };
  const std::string per_job = d.new_tres_per_job.empty() ? job.fields.per_job : d.new_tres_per_job;
  const std::string per_node = d.new_tres_per_node.empty() ? job.fields.per_node : d.new_tres_per_node;
  if (count(per_job) > 0) return count(per_job);
  if (count(per_node) > 0) return count(per_node) * nodes;
  return count(job.fields.per_task) * tasks;
}

const char* kBig = "model=llama3-70b seq=8192 zero=3 recompute=full";

TEST(Decision, AcceptRejectWarnResize) {
  Policy policy = parse_policy("gpus_per_node = 8\npartition.elastic.action = resize\npartition.soft.action = warn")
                      .value();
  const int64_t expected = cli_min_gpus(std::string(kBig) + " gpu=h100 gpus_per_node=8");
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8")).verdict, Verdict::kAccept);
  const Decision reject = decide(policy, job_of(kBig, "gres:gpu:h100:8"));
  EXPECT_EQ(reject.verdict, Verdict::kReject);
  EXPECT_EQ(reject.reason, Reason::kTooFewGpus);
  EXPECT_EQ(reject.message.rfind("trainfit: llama3-70b at seq 8192 needs ", 0), 0u) << reject.message;
  EXPECT_NE(reject.message.find("on 8 x H100 (79.6 GiB usable); min_gpus_to_fit=" + std::to_string(expected)),
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
                               "partition.strict.action = resize").value();
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
  std::string same;
  for (int i = 0; i < 1000; ++i) same += "gpu,";
  EXPECT_EQ(decide(policy, job_of("model=llama3-8b zero=3", "gres:gpu:h100:8", same)).verdict, Verdict::kAccept);
}

TEST(Annotation, CommentAndOptionsAreOneOrTheOtherOrAgree) {
  const std::string comment = "trainfit: model=llama3-405b seq=131072";
  Annotation a;
  Result<bool> both = annotation_of_job({spank_env_name("model") + "=llama3-8b"}, &comment, &a);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().code, ErrorCode::kInconsistent);
  EXPECT_EQ(both.error().field, "comment");
  Annotation check_only;
  ASSERT_TRUE(annotation_of_job({spank_env_name("check") + "=1"}, &comment, &check_only).ok());
  EXPECT_TRUE(check_only.found);
  EXPECT_TRUE(check_only.check);
  EXPECT_EQ(check_only.request.model, "llama3-405b");
  const std::string same = "trainfit: model=llama3-8b";
  Annotation agree;
  EXPECT_TRUE(annotation_of_job({spank_env_name("model") + "=llama3-8b"}, &same, &agree).ok());
}

TEST(SlurmConf, PartitionsAsSlurmctldReadsThem) {
  const std::vector<SlurmPartition> parts = slurm_partitions(
      "# a comment PartitionName=commented\n"
      "NodeName=n[1-4] Gres=gpu:8\n"
      "partitionname=DEFAULT OverSubscribe=EXCLUSIVE State=UP\n"
      "PartitionName=whole Nodes=n[1-2]\n"
      "PartitionName=Shared Nodes=n[3-4] \\\n"
      "   OverSubscribe=FORCE:4 # continued\n"
      "PartitionName=old Shared=Exclusive\n");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].name, "whole");
  EXPECT_TRUE(parts[0].whole_nodes);  // from DEFAULT
  EXPECT_EQ(parts[1].name, "Shared");
  EXPECT_FALSE(parts[1].whole_nodes);  // the continuation line's value
  EXPECT_TRUE(parts[2].whole_nodes);   // the pre-15.08 spelling
  Policy policy = parse_policy("partition.shared.action = warn\npartition.whole.action = warn").value();
  const std::vector<Error> unknown = unknown_partitions(policy, parts);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].code, ErrorCode::kUnknownName);
  EXPECT_EQ(unknown[0].field, "partition.shared");
  EXPECT_NE(unknown[0].message.find("did you mean 'Shared'"), std::string::npos) << unknown[0].message;
  EXPECT_FALSE(has_settings("# only a comment\n\n   \n"));
  EXPECT_EQ(parts[0].max_nodes, 2);
  EXPECT_EQ(parts[1].max_nodes, 2);
  EXPECT_EQ(parts[2].max_nodes, 0);  // no Nodes=: not known
  EXPECT_TRUE(has_settings("# policy\naction = warn\n"));
}

// The keys check-config --keys lists are the parser's: each is taken (or its value judged),
// none is "unknown", and a key not listed is.
TEST(Policy, KeysListedAreTheParsersKeys) {
  const std::vector<std::string> keys = policy_keys();
  ASSERT_GE(keys.size(), 10u);
  for (std::string key : keys) {
    if (key == "gpu_alias.NAME") key = "gpu_alias.h100_80g";
    if (key == "partition.NAME.KEY") key = "partition.gpu.action";
    Result<Policy> parsed = parse_policy(key + " = x\n");
    if (!parsed) {
      EXPECT_EQ(parsed.error().message.find("unknown key"), std::string::npos) << key << ": " << parsed.error().message;
    }
  }
  Result<Policy> unknown = parse_policy("no_such_key = 1\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().field, "trainfit.conf") << unknown.error().message;  // no key of trainfit.conf's
  EXPECT_EQ(unknown.error().line, 1) << unknown.error().message;
  // kInvalidValue like a bad value of a known key: only the words tell an unknown key apart.
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidValue) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("unknown key 'no_such_key'"), std::string::npos);
}

// A job's most nodes per partition: Nodes= counted as Slurm's hostlists are, MaxNodes= when lower.
TEST(SlurmConf, MostNodesAJobCanHave) {
  const std::vector<SlurmPartition> parts = slurm_partitions(
      "NodeName=gpu[01-16] Gres=gpu:8\n"
      "NodeName=r[1-2]n[1-4],login1\n"
      "NodeSet=fat Feature=fat\n"
      "PartitionName=DEFAULT MaxNodes=UNLIMITED\n"
      "PartitionName=a Nodes=gpu[01-04,07,10-11]\n"
      "PartitionName=b Nodes=r[1-2]n[1-4],login1\n"
      "PartitionName=c Nodes=ALL\n"
      "PartitionName=d Nodes=ALL MaxNodes=5\n"
      "PartitionName=e Nodes=fat\n"
      "PartitionName=f Nodes=gpu[05-03]\n"
      "PartitionName=g Nodes=gpu[01-08] MaxNodes=16\n");
  ASSERT_EQ(parts.size(), 7u);
  EXPECT_EQ(parts[0].max_nodes, 7);   // 4 + 1 + 2
  EXPECT_EQ(parts[1].max_nodes, 9);   // 2 x 4 + 1
  EXPECT_EQ(parts[2].max_nodes, 25);  // 16 + 9
  EXPECT_EQ(parts[3].max_nodes, 5);   // MaxNodes is lower
  EXPECT_EQ(parts[4].max_nodes, 0);   // a NodeSet: not counted here
  EXPECT_EQ(parts[5].max_nodes, 0);   // not a range
  EXPECT_EQ(parts[6].max_nodes, 8);   // MaxNodes above the partition's nodes
}

// Every resized job is one Slurm runs as granted (sbatch's own checks): at least one task per
// node, whole tasks of --gpus-per-task per node, --ntasks-per-node kept, no more GPUs on a node
// than it has, never above resize_max_gpus. Brute force over layouts, node sizes and targets.
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
  const Policy policy = parse_policy("action = resize\ngpus_per_node = 8").value();
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
  broken.annotation_error = make_error(ErrorCode::kInvalidValue, "seq_length", "seq='abc' is not valid");
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
  const Policy policy = parse_policy("").value();
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
      ASSERT_NE(d.message.find("min_gpus_to_fit=none (or: "), std::string::npos) << job_spec << ": " << d.message;
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
      const Result<Response> r = respond(request, {});
      ASSERT_TRUE(r.ok()) << job_spec;
      const std::string line = verdict(*r);
      EXPECT_NE(line.find("min_gpus_to_fit=none (or: "), std::string::npos) << line;
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

// ---- Updates (job_modify) ----

TEST(Update, WhatAnUpdateCarriesIsChecked) {
  const Policy policy = parse_policy("partition.strict.require_annotation = true\npartition.elastic.action = resize").value();
  Update move;  // scontrol update job=7 Partition=strict, unannotated
  move.job_id = "7";
  move.job.partition = "strict";
  move.sets_partition = true;
  const Decision m = decide_update(policy, move);
  EXPECT_EQ(m.verdict, Verdict::kReject);
  EXPECT_EQ(m.reason, Reason::kAnnotationRequired);
  EXPECT_NE(m.message.find("scontrol update job=7"), std::string::npos) << m.message;

  Update comment;  // scontrol update job=7 Comment="trainfit: model=llama3-405b seq=131072"
  comment.job_id = "7";
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-405b seq=131072", &comment.job.annotation).ok());
  EXPECT_EQ(decide_update(policy, comment).verdict, Verdict::kReject);

  comment.job.fields.per_job = "gres:gpu:h100:8";  // restated with its GPUs: checked like a submission
  comment.sets_gpus = true;
  comment.job.partition = "elastic";
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
  EXPECT_EQ(user.reason, Reason::kGpuRequest);
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

// ---- Audit records ----

TEST(Audit, OneJsonLinePerRecordWithCappedUserText) {
  AuditRecord record;
  record.time = 1764633600;
  record.uid = 1000;
  record.user = "alice";
  record.job_name = std::string("bad\xff name \x1b[31m");  // invalid UTF-8 and an escape: kept safe
  record.annotation.model = std::string(120000, 'x');     // a 120 KB comment
  record.decision = decide(parse_policy("").value(), job_of(kBig, "gres:gpu:h100:8"));
  const std::string line = audit_json(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_LT(line.size(), 16u * 1024);
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["time"], "2025-12-02T00:00:00Z");
  EXPECT_EQ(j["action"], "reject");
  EXPECT_EQ(j["reason"], "too_few_gpus");
  EXPECT_EQ(j["min_gpus_to_fit"], record.decision.min_gpus);
  EXPECT_TRUE(j["resized_to"].is_null());
  const std::string annotation = j["annotation"].get<std::string>();
  const size_t kept = annotation.find("…[truncated ");
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(annotation.substr(kept), "…[truncated " + std::to_string(120006 - kept) + " bytes]");  // "model=" + 120000
  EXPECT_EQ(truncated(std::string(5000, 'y'), 1024), std::string(1024, 'y') + "…[truncated 3976 bytes]");
  EXPECT_EQ(truncated("short", 1024), "short");
  EXPECT_EQ(truncated(std::string(10, 'z'), 4, 99), "zzzz…[truncated 95 bytes]");
  EXPECT_NE(j["job_name"].get<std::string>().find('\x1b'), std::string::npos);  // JSON-escaped, parsed back
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
}

TEST(Audit, HostRamAndTheMemoryRequestAreRecorded) {
  AuditRecord record;
  EXPECT_TRUE(nlohmann::json::parse(audit_json(record))["host_ram_per_node_gb"].is_null());  // no offload
  EXPECT_TRUE(nlohmann::json::parse(audit_json(record))["mem_per_node_gb"].is_null());
  record.decision.host_ram_per_node_gb = 131.25;
  record.decision.memory_per_node_gb = 64;
  const nlohmann::json j = nlohmann::json::parse(audit_json(record));
  EXPECT_DOUBLE_EQ(j["host_ram_per_node_gb"].get<double>(), 131.25);
  EXPECT_DOUBLE_EQ(j["mem_per_node_gb"].get<double>(), 64.0);
}

// ---- Files and log text ----

TEST(Files, RegularFilesOnlyBoundedAndEachCaseNamed) {
  char dir[] = "/tmp/trainfit-files-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo", file = std::string(dir) + "/conf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Each: the field "file", the file as a whole (line 0), the message "PATH: reason", the reason naming the case.
  auto expect_file_error = [](const Result<std::string>& read, const std::string& path, ErrorCode code,
                              const std::string& reason) {
    const Error e = failure_of(read);
    EXPECT_EQ(e.code, code) << e.message;
    EXPECT_EQ(e.field, "file") << e.message;
    EXPECT_EQ(e.line, 0) << e.message;
    EXPECT_EQ(e.reason, reason) << e.message;
    EXPECT_EQ(e.message, path + ": " + reason);
  };
  expect_file_error(read_regular_file(fifo, 1024), fifo, ErrorCode::kInvalidValue,  // and returns
                    "is a FIFO, not a regular file");
  expect_file_error(read_regular_file(dir, 1024), dir, ErrorCode::kInvalidValue, "is a directory, not a regular file");
  expect_file_error(read_regular_file("/dev/zero", 1024), "/dev/zero", ErrorCode::kInvalidValue,
                    "is a character device, not a regular file");
  expect_file_error(read_regular_file(std::string(dir) + "/none", 1024), std::string(dir) + "/none",
                    ErrorCode::kMissing, "not found");
  { std::ofstream(file) << std::string(2048, '#'); }
  expect_file_error(read_regular_file(file, 1024), file, ErrorCode::kInvalidValue,
                    "is 2048 bytes; accepted: at most 1024");
  EXPECT_EQ(read_regular_file(file, 4096).value().size(), 2048u);
  unlink(fifo.c_str());
  unlink(file.c_str());
  rmdir(dir);
}

// A full descriptor table passes by itself: kUnavailable (a reloader tries again, silently);
// a file that is wrong is kInvalidValue (reported once). plugin/job_submit/policy_store.cpp tells them apart.
TEST(Files, AFullDescriptorTableIsUnavailableNotInvalid) {
  char dir[] = "/tmp/trainfit-files-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/conf";
  { std::ofstream(file) << "action = warn\n"; }
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> held;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held.push_back(fd);
  const Result<std::string> full = read_regular_file(file, 1024);
  for (int fd : held) ::close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kUnavailable) << full.error().message;
  EXPECT_EQ(full.error().field, "file") << full.error().message;
  EXPECT_EQ(read_regular_file(file, 1024).value(), "action = warn\n");  // once descriptors are free
  const Error wrong = failure_of(read_regular_file(dir, 1024));
  EXPECT_EQ(wrong.code, ErrorCode::kInvalidValue) << wrong.message;  // wrong, not passing
  EXPECT_EQ(wrong.field, "file") << wrong.message;
  unlink(file.c_str());
  rmdir(dir);
}

TEST(LogText, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("a\x1b[31mb\nc"), "a\\x1b[31mb\\x0ac");
  EXPECT_EQ(printable("csi \xc2\x9b" "31m"), "csi \\xc2\\x9b31m");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // ordinary UTF-8 stays
}

}  // namespace
}  // namespace trainfit::admission

// ---- Found by an adversarial review ----

namespace trainfit::admission {
namespace {

TEST(Review, HugeAnnotationTextIsRefusedCheaply) {
  Annotation a;
  const Result<bool> r = annotation_from_comment("trainfit: " + std::string(200000, 'k') + "=1", &a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidValue) << r.error().message;
  EXPECT_EQ(r.error().field, "comment") << r.error().message;
  EXPECT_LT(r.error().message.size(), 300u);
  const Result<bool> key = annotation_from_comment("trainfit: model=" + std::string(3000, 'm'), &a);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().code, ErrorCode::kInvalidValue) << key.error().message.substr(0, 300);
  EXPECT_EQ(key.error().field, "model") << key.error().message.substr(0, 300);
  EXPECT_NE(key.error().message.find("too long"), std::string::npos) << key.error().message;
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

TEST(Review, NodesAndTasksSlurmInfersCount) {
  JobGpuFields f;  // sbatch -n 32 --ntasks-per-node=8 --gpus-per-node=8
  f.per_node = "gres:gpu:8";
  f.tasks = 32;
  f.tasks_per_node = 8;
  EXPECT_EQ(total_gpus(f)->gpus, 32);
  JobGpuFields t;  // -N 4 --ntasks-per-node=2 --gpus-per-task=1
  t.per_task = "gres:gpu:1";
  t.nodes = 4;
  t.tasks_per_node = 2;
  EXPECT_EQ(total_gpus(t)->gpus, 8);
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

TEST(Review, TheDefaultPartitionCanBeNamed) {
  const Policy policy = parse_policy("default_partition = gpu\npartition.gpu.require_annotation = true").value();
  Job plain;
  plain.fields.per_job = "gres:gpu:8";  // no -p: slurmctld hands job_submit no partition
  EXPECT_EQ(decide(policy, plain).reason, Reason::kAnnotationRequired);
}

TEST(Review, ShortOptionClustersAreRead) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-lG8"}, {"-lG", "8"}, {"-vlG8", "--mpi", "pmix"}}) {
    JobGpuFields f;
    f.per_job = "gpu:h100:64";
    ASSERT_TRUE(apply_srun_options(options, &f)) << options.front();
    EXPECT_EQ(total_gpus(f)->gpus, 8) << options.front();
  }
}

TEST(Review, AJobAskingNoGpusGetsItsRealMinimum) {
  const Decision d = decide(parse_policy("").value(), job_of("model=gpt2", ""));
  EXPECT_EQ(d.reason, Reason::kGpuRequest);
  EXPECT_EQ(d.message.find("min_gpus_to_fit=none"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace trainfit::admission
