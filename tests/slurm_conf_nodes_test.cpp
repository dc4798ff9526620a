// slurm.conf's nodes, GPUs, partitions' node lists, Default=YES and AccountingStorageEnforce,
// read from hand-written texts whose counts are counted here by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

int64_t total_gpus(const std::vector<NodeGpus>& gpus) {
  int64_t n = 0;
  for (const NodeGpus& g : gpus) n += g.count;
  return n;
}

TEST(SlurmNodes, GresGpuEntriesAsGresCReadsThem) {
  const std::vector<NodeGpus> typed = node_gpus("gpu:a100-40gb:4");
  ASSERT_EQ(typed.size(), 1u);
  EXPECT_EQ(typed[0].type, "a100-40gb");
  EXPECT_EQ(typed[0].count, 4);
  const std::vector<NodeGpus> untyped = node_gpus("gpu:8");
  ASSERT_EQ(untyped.size(), 1u);
  EXPECT_EQ(untyped[0].type, "");
  EXPECT_EQ(untyped[0].count, 8);
  // Several entries, other GRES ignored, socket binding dropped, no_consume not a type.
  const std::vector<NodeGpus> mixed = node_gpus("mps:400,gpu:h100:2(S:0),gpu:l4:no_consume:3,shard:8,gpu:h100:1");
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[0].type, "h100");
  EXPECT_EQ(mixed[0].count, 3);  // 2 + 1: the same type twice is summed (gres_add_type)
  EXPECT_EQ(mixed[1].type, "l4");
  EXPECT_EQ(mixed[1].count, 3);
  EXPECT_EQ(total_gpus(node_gpus("gpu")), 1);        // a bare name is one
  EXPECT_EQ(total_gpus(node_gpus("gpu:tesla")), 1);  // a type without a count is one
  EXPECT_EQ(node_gpus("gpu:tesla")[0].type, "tesla");
  EXPECT_EQ(total_gpus(node_gpus("gpu:1K")), 1024);  // suffix_mult
  EXPECT_EQ(total_gpus(node_gpus("mps:100,gpus:4")), 0);
  EXPECT_EQ(total_gpus(node_gpus("")), 0);
}

TEST(SlurmNodes, NodeLinesWithDefaultsAndHostlists) {
  const SlurmNodes nodes = slurm_nodes(
      "NodeName=DEFAULT CPUs=64 Gres=gpu:a100-40gb:4 Features=a100,ib\n"
      "NodeName=a[1-3]\n"
      "NodeName=b[01-02],c7 Gres=gpu:h100:8 Feature=h100\n"
      "NodeName=DEFAULT Gres= Features=\n"
      "NodeName=cpu[1-2] CPUs=128\n");
  ASSERT_TRUE(nodes.complete);
  // a1 a2 a3, b01 b02 c7, cpu1 cpu2: 8 nodes.
  ASSERT_EQ(nodes.nodes.size(), 8u);
  EXPECT_EQ(nodes.nodes[0].name, "a1");
  EXPECT_EQ(nodes.nodes[2].name, "a3");
  EXPECT_EQ(nodes.nodes[3].name, "b01");  // zero padding kept
  EXPECT_EQ(nodes.nodes[5].name, "c7");
  EXPECT_EQ(nodes.nodes[0].gpu_count(), 4);  // from DEFAULT
  EXPECT_EQ(nodes.nodes[0].gpus[0].type, "a100-40gb");
  EXPECT_EQ(nodes.nodes[0].features, (std::vector<std::string>{"a100", "ib"}));
  EXPECT_EQ(nodes.nodes[4].gpus[0].type, "h100");
  EXPECT_EQ(nodes.nodes[4].features, (std::vector<std::string>{"h100"}));  // Feature= is Features=
  EXPECT_EQ(nodes.nodes[6].gpu_count(), 0);  // the second DEFAULT cleared Gres
  EXPECT_TRUE(nodes.nodes[7].features.empty());
  // Brackets multiply: r1n1 r1n2 r2n1 r2n2.
  const SlurmNodes grid = slurm_nodes("NodeName=r[1-2]n[1-2] Gres=gpu:2\n");
  ASSERT_EQ(grid.nodes.size(), 4u);
  EXPECT_EQ(grid.nodes[1].name, "r1n2");
  EXPECT_EQ(grid.nodes[2].name, "r2n1");
  // Not expanded (a reversed range, too many hosts): the node list is not complete.
  EXPECT_FALSE(slurm_nodes("NodeName=n[5-3]\n").complete);
  EXPECT_FALSE(slurm_nodes("NodeName=n[1-100000]\n").complete);
}

TEST(SlurmConf, PartitionNodesDefaultAndEnforce) {
  const SlurmConf conf = read_slurm_conf(
      "AccountingStorageEnforce=limits,qos\n"
      "NodeName=g[1-2] Gres=gpu:h100:8 Features=h100\n"
      "NodeName=c[1-2]\n"
      "NodeSet=hset Feature=h100\n"
      "NodeSet=odd Feature=h100&ib\n"
      "PartitionName=mixed Nodes=g[1-2],c[1-2] Default=YES\n"
      "PartitionName=all Nodes=ALL\n"
      "PartitionName=sets Nodes=hset\n"
      "PartitionName=complex Nodes=odd\n"
      "PartitionName=ghost Nodes=g[1-3]\n"
      "PartitionName=empty\n");
  EXPECT_EQ(conf.default_partition, "mixed");
  EXPECT_TRUE(conf.accounts_enforced);  // limits implies associations
  ASSERT_EQ(conf.partitions.size(), 6u);
  ASSERT_TRUE(conf.partitions[0].nodes);
  EXPECT_EQ(*conf.partitions[0].nodes, (std::vector<std::string>{"g1", "g2", "c1", "c2"}));
  EXPECT_TRUE(conf.partitions[0].is_default);
  ASSERT_TRUE(conf.partitions[1].nodes);
  EXPECT_EQ(conf.partitions[1].nodes->size(), 4u);
  ASSERT_TRUE(conf.partitions[2].nodes);
  EXPECT_EQ(*conf.partitions[2].nodes, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_FALSE(conf.partitions[3].nodes);  // a NodeSet by an expression: not known, never guessed
  EXPECT_FALSE(conf.partitions[4].nodes);  // g3 is no node of slurm.conf
  EXPECT_FALSE(conf.partitions[5].nodes);
  // The last Default=YES wins (slurmctld's read_config.c); enforce values that do not check accounts.
  EXPECT_EQ(read_slurm_conf("PartitionName=a Default=YES\nPartitionName=b Default=yes\n").default_partition, "b");
  EXPECT_EQ(read_slurm_conf("PartitionName=a Default=NO\n").default_partition, "");
  EXPECT_FALSE(read_slurm_conf("AccountingStorageEnforce=nojobs,nosteps\n").accounts_enforced);
  EXPECT_FALSE(read_slurm_conf("ClusterName=x\n").accounts_enforced);
  for (const char* value : {"associations", "safe", "wckeys", "all", "Associations"}) {
    EXPECT_TRUE(read_slurm_conf(std::string("AccountingStorageEnforce=") + value + "\n").accounts_enforced) << value;
  }
}

// A large cluster: 60000 nodes in one line, 20 partitions of all of them, read whole (the
// load's work is bounded by kMaxSlurmNodes, not by what each partition names).
TEST(SlurmConf, LargeClusterIsReadWhole) {
  std::string text = "NodeName=n[00001-60000] Gres=gpu:h100:8\n";
  for (int i = 0; i < 20; ++i) text += "PartitionName=p" + std::to_string(i) + " Nodes=n[00001-60000]\n";
  const SlurmConf conf = read_slurm_conf(text);
  ASSERT_EQ(conf.nodes.nodes.size(), 60000u);
  EXPECT_EQ(conf.nodes.nodes.back().name, "n60000");
  ASSERT_EQ(conf.partitions.size(), 20u);
  ASSERT_TRUE(conf.partitions[19].nodes);
  EXPECT_EQ(conf.partitions[19].nodes->size(), 60000u);
  // Past the bound: not known, never a partial list.
  const SlurmConf over = read_slurm_conf("NodeName=n[1-70000]\nPartitionName=all Nodes=ALL\n");
  EXPECT_FALSE(over.nodes.complete);
  EXPECT_FALSE(over.partitions[0].nodes);
}

}  // namespace
}  // namespace trainfit::admission
