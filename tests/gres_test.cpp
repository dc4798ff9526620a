// GPU requests as Slurm writes them (every release's spelling, totals over the job's fields)
// and the GPU options of srun steps. Expected values come from the request itself or from
// what slurmctld allocated for the same request (docs/slurm.md).
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
                      Spelling{"gres:gpu:2,gres:gpu:1", 1, ""}, Spelling{"gres:nvme:1,gres:gpu:h100:8", 8, "h100"},
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

// A type named twice is allocated once, with the last count. Measured on slurmctld 22.05.8
// (sbatch, then `scontrol show job -d` of the running job): --gpus=h100:3,h100:5 ran on 5
// GPUs, --gpus=h100:5,h100:3 on 3, --gres=gpu:3,gpu:5 on 5, --gres=gpu:h100:3,gpu:h100:5,
// gpu:h100:2 on 2, --gpus-per-task=h100:2,h100:1 -n2 on 2. Distinct types are both allocated.
TEST(Gres, ATypeNamedAgainKeepsItsLastCountAsSlurmDoes) {
  struct Case {
    const char* text;
    int64_t allocated;
  };
  for (const Case& c : {Case{"gres:gpu:h100:3,gres:gpu:h100:5", 5}, Case{"gres:gpu:h100:5,gres:gpu:h100:3", 3},
                        Case{"gres:gpu:3,gres:gpu:5", 5}, Case{"gres:gpu:h100:3,gres:gpu:h100:5,gres:gpu:h100:2", 2},
                        Case{"gres/gpu:h100=11,gres/gpu:h100=11", 11}, Case{"gpu:h100:11;gpu:H100:11", 11},
                        Case{"gres:gpu:h100:2,gres:gpu:a100:3,gres:gpu:h100:4", 7}}) {
    Result<TresList> list = parse_tres(c.text);
    ASSERT_TRUE(list.ok()) << c.text << ": " << list.error().message;
    EXPECT_EQ(list->gpus, c.allocated) << c.text;
  }
  JobGpuFields per_task;  // --gpus-per-task=h100:2,h100:1 -n 2
  per_task.per_task = "gres:gpu:h100:2,gres:gpu:h100:1";
  per_task.tasks = 2;
  EXPECT_EQ(total_gpus(per_task)->gpus, 2);
}

// sbatch refuses "Invalid GRES specification (with and without type identification)".
TEST(Gres, TypedAndUntypedTogetherAreRefused) {
  for (const char* text : {"gres:gpu:3,gres:gpu:h100:5", "gres/gpu:h100=5,gres/gpu=3"}) {
    const Error e = failure_of(parse_tres(text));
    EXPECT_EQ(e.field, "gres") << text;
    EXPECT_NE(e.message.find("both with and without a type"), std::string::npos) << e.message;
  }
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

TEST(Review, ShortOptionClustersAreRead) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-lG8"}, {"-lG", "8"}, {"-vlG8", "--mpi", "pmix"}}) {
    JobGpuFields f;
    f.per_job = "gpu:h100:64";
    ASSERT_TRUE(apply_srun_options(options, &f)) << options.front();
    EXPECT_EQ(total_gpus(f)->gpus, 8) << options.front();
  }
}

}  // namespace
}  // namespace trainfit::admission
