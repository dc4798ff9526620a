// slurm.conf's Include lines (slurm_conf_text): the nodes and partitions of included files are
// slurmctld's too, so the gate reads them. Expected facts are the files' own lines, counted by
// hand; the verdicts come from the estimator on the stated GPU.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "trainfit/admission.h"
#include "trainfit/estimate.h"

namespace trainfit::admission {
namespace {

class SlurmConfInclude : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "slurm-include.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::mkdir((dir_ + "/parts").c_str(), 0755), 0);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

// Nodes=ALL names the included file's nodes; Default=YES stands in an included file.
TEST_F(SlurmConfInclude, IncludedNodesAndPartitionsAreRead) {
  const std::string main = write("slurm.conf",
                                 "ClusterName=Alpha\n"
                                 "NodeName=h[1-2] Gres=gpu:h100:8\n"
                                 "  include nodes-%c.conf   # relative to this file, %c = the cluster\n"
                                 "INCLUDE parts/partitions.conf\n");
  write("nodes-alpha.conf", "NodeName=a[1-4] Gres=gpu:a100-40gb:8 Features=a100\n");
  write("parts/partitions.conf", "PartitionName=all Nodes=ALL Default=YES\nPartitionName=hh Nodes=h[1-2]\n");
  Result<std::string> text = slurm_conf_text(main);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const SlurmConf conf = read_slurm_conf(text.value());
  EXPECT_EQ(conf.default_partition, "all");
  ASSERT_EQ(conf.partitions.size(), 2u);
  ASSERT_TRUE(conf.partitions[0].nodes.has_value());
  EXPECT_EQ(*conf.partitions[0].nodes, (std::vector<std::string>{"h1", "h2", "a1", "a2", "a3", "a4"}));
}

// The gate's verdict: an untyped request in `all` may land on the included A100 40GB nodes.
TEST_F(SlurmConfInclude, UntypedGpusAreJudgedOnIncludedNodes) {
  const std::string main = write("slurm.conf", "NodeName=h[1-2] Gres=gpu:h100:8\nInclude " + dir_ +
                                                   "/nodes.conf\nPartitionName=all Nodes=ALL\n");
  write("nodes.conf", "NodeName=a[1-4] Gres=gpu:a100-40gb:8\n");
  Result<AssembledPolicy> a = assemble_policy("gpus_per_node = 8\nrefuse_when = likely\n", slurm_conf_text(main),
                                              [](const std::string&) -> std::optional<uint32_t> { return std::nullopt; });
  ASSERT_TRUE(a.ok());
  Job job;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-8b seq=4096 zero=3", &job.annotation).ok());
  job.fields.per_job = "gres:gpu:8";
  job.partition = "all";
  Request request;  // the premise: fits 8 x H100, not 8 x A100 40GB
  ASSERT_TRUE(apply_key_values(request, "model=llama3-8b seq=4096 zero=3 num_gpus=8 gpus_per_node=8 gpu=a100-40gb", ' ').ok());
  ASSERT_FALSE(respond(request, {false, false})->breakdown.fits);
  request.gpu = "h100";
  ASSERT_TRUE(respond(request, {false, false})->breakdown.fits);
  const Decision d = decide(a->policy, job);
  EXPECT_EQ(d.verdict, Verdict::kReject) << d.message;
  EXPECT_EQ(d.gpu, "a100-40gb");
}

TEST_F(SlurmConfInclude, AnIncludeThatCannotBeReadOrLoopsIsAnError) {
  const std::string missing = write("missing.conf", "NodeName=h1 Gres=gpu:h100:8\nInclude nowhere.conf\n");
  Result<std::string> text = slurm_conf_text(missing);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("nowhere.conf"), std::string::npos) << text.error().message;
  const std::string loop = write("loop.conf", "Include loop.conf\n");
  Result<std::string> looped = slurm_conf_text(loop);
  ASSERT_FALSE(looped.ok());
  EXPECT_NE(looped.error().message.find("nested deeper"), std::string::npos) << looped.error().message;
  // "Included" and "IncludeX" are not Include lines (the word and a blank).
  const std::string plain = write("plain.conf", "IncludeX=1\nNodeName=h1 Gres=gpu:h100:8\n");
  ASSERT_TRUE(slurm_conf_text(plain).ok());
}

}  // namespace
}  // namespace trainfit::admission
