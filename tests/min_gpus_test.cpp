// min_gpus_to_fit against a brute-force scan, with the layout rules.
#include "test_util.h"

namespace trainfit {
namespace {

bool fits_at(Config c, int64_t gpus) {
  c.num_gpus = gpus;
  return estimate(c).fits;
}

struct Case {
  const char* spec;
};

// Nothing sharded (zero_stage 0, tp = pp = 1): no count fits, and the answer says that more
// GPUs cannot help; sharded, the same model and GPU fit at some count.
TEST(MinGpus, NoneUnshardedSaysSo) {
  const MinGpus none = min_gpus_to_fit(testing::config_of("model=llama3-8b,gpu=h100,zero_stage=0"));
  EXPECT_EQ(none.gpus, 0);
  EXPECT_TRUE(none.unsharded) << none.reason;
  const MinGpus sharded = min_gpus_to_fit(testing::config_of("model=llama3-8b,gpu=h100,zero_stage=3"));
  EXPECT_GT(sharded.gpus, 0) << sharded.reason;
  const MinGpus too_big = min_gpus_to_fit(testing::config_of("model=llama3-405b,gpu=a100-40gb,zero_stage=1,seq_length=131072"));
  EXPECT_EQ(too_big.gpus, 0);
  EXPECT_FALSE(too_big.unsharded) << too_big.reason;  // sharded: the reason is another one
}

class MinGpusCase : public ::testing::TestWithParam<Case> {};

TEST_P(MinGpusCase, MatchesBruteForce) {
  const Config c = testing::config_of(GetParam().spec);
  const MinGpus found = min_gpus_to_fit(c);
  ASSERT_GT(found.gpus, 0) << found.reason;
  const int64_t unit = c.tp * c.pp * c.cp;
  EXPECT_EQ(found.gpus % unit, 0);
  if (c.gpus_per_node > 0 && found.gpus > c.gpus_per_node) {
    EXPECT_EQ(found.gpus % c.gpus_per_node, 0);
  }
  EXPECT_TRUE(fits_at(c, found.gpus));
  // No smaller valid count fits.
  for (int64_t gpus = unit; gpus < found.gpus; gpus += unit) {
    if (c.gpus_per_node > 0 && gpus > c.gpus_per_node && gpus % c.gpus_per_node != 0) continue;
    EXPECT_FALSE(fits_at(c, gpus)) << gpus << " GPUs already fit";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, MinGpusCase,
    ::testing::Values(Case{"model=llama3-70b,gpu=h100,seq_length=8192,zero_stage=3,recompute=full"},
                      Case{"model=llama3-70b,gpu=h100,seq_length=8192,zero_stage=3,recompute=full,gpus_per_node=8"},
                      Case{"model=llama3-70b,gpu=a100-40gb,seq_length=4096,zero_stage=3,tensor_parallel=4,num_gpus=4,recompute=full,"
                           "sequence_parallel=true,gpus_per_node=8"},
                      Case{"model=llama3-405b,gpu=h100,seq_length=8192,sharding=fsdp-full,tensor_parallel=8,"
                           "pipeline_parallel=16,num_gpus=128,recompute=full,gpus_per_node=8"},
                      Case{"model=llama3-8b,gpu=l40s,seq_length=2048,zero_stage=2,precision=bf16,recompute=full"},
                      Case{"model=mixtral-8x7b,gpu=h200,zero_stage=3,expert_parallel=2,num_gpus=2,recompute=full"}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return "Layout" + std::to_string(param_info.index); });

// A request that does not give gpus_per_node is counted in 8-GPU nodes (kDefaultGpusPerNode,
// trainfit.conf's default), and the answer's words say so.
TEST(MinGpus, UnstatedNodesAreEightGpusAndTheAnswerSaysSo) {
  const Config unstated = testing::config_of("model=llama3-70b,gpu=h100,seq_length=8192,zero_stage=3,recompute=full");
  const Config stated = testing::config_of("model=llama3-70b,gpu=h100,seq_length=8192,zero_stage=3,recompute=full,gpus_per_node=8");
  EXPECT_EQ(unstated.gpus_per_node, 8);
  EXPECT_TRUE(unstated.gpus_per_node_assumed);
  EXPECT_FALSE(stated.gpus_per_node_assumed);
  EXPECT_EQ(min_gpus_to_fit(unstated).gpus, min_gpus_to_fit(stated).gpus);
  EXPECT_EQ(min_gpus_text(unstated, 24), "24 (3 nodes of 8)");
  EXPECT_EQ(min_gpus_text(unstated, 6), "6");
  EXPECT_EQ(min_gpus_text(unstated, 0), "none");
  EXPECT_EQ(min_gpus_rule(unstated), "any GPU count up to one 8-GPU node, whole nodes beyond (gpus_per_node=8, the default)");
  const Config tp4 = testing::config_of("model=llama3-70b,tensor_parallel=4,num_gpus=4,gpus_per_node=4");
  EXPECT_EQ(min_gpus_rule(tp4), "multiples of 4 GPUs up to one 4-GPU node, whole nodes beyond (gpus_per_node=4)");
}

TEST(MinGpus, NoneWhenActivationsAloneExceedHbm) {
  const Config c = testing::config_of("model=llama3-70b,seq_length=1048576,zero_stage=3,attention=eager");
  const MinGpus found = min_gpus_to_fit(c);
  EXPECT_EQ(found.gpus, 0);
  EXPECT_NE(found.reason.find("activations"), std::string::npos) << found.reason;
}

TEST(MinGpus, NoneWithoutShardingWhenStatesNeverShrink) {
  const Config c = testing::config_of("model=llama3-70b,zero_stage=0");
  EXPECT_EQ(min_gpus_to_fit(c).gpus, 0);
}

TEST(MinGpus, OneGpuWhenItAlreadyFits) {
  const Config c = testing::config_of("model=gpt2,seq_length=1024,gpu=h100");
  EXPECT_EQ(min_gpus_to_fit(c).gpus, 1);
}

// The search (a guess from two breakdowns, a gallop, a bisection) against a scan of every
// valid count up to 4,096 GPUs, over models, GPUs, sequence lengths, ZeRO stages, TP and
// node sizes: the guess may be wrong, the answer never.
TEST(MinGpus, SearchMatchesAScanOverManyLayouts) {
  constexpr int64_t kAtMost = 4096;
  int checked = 0, found_some = 0;
  for (const char* model : {"llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "qwen3-30b-a3b", "gemma2-27b"}) {
    for (const char* gpu : {"h100", "a100-40gb", "l40s"}) {
      for (const int64_t seq : {2048, 8192, 32768}) {
        for (const int zero : {1, 2, 3}) {
          for (const int64_t node : {4, 8, 64}) {
            for (const int64_t tp : {1, 4}) {
              for (const char* recompute : {"none", "full"}) {
                const std::string spec = std::string("model=") + model + ",gpu=" + gpu + ",seq_length=" +
                                         std::to_string(seq) + ",zero_stage=" + std::to_string(zero) +
                                         ",gpus_per_node=" + std::to_string(node) + ",tensor_parallel=" +
                                         std::to_string(tp) + ",num_gpus=" + std::to_string(tp) +
                                         (tp > 1 ? ",sequence_parallel=true" : "") + ",recompute=" + recompute;
                const Config c = testing::config_of(spec);
                int64_t first = 0;
                for (int64_t gpus = tp; gpus <= kAtMost && first == 0; gpus += tp) {
                  if (gpus > node && gpus % node != 0) continue;
                  if (fits_at(c, gpus)) first = gpus;
                }
                ASSERT_EQ(min_gpus_to_fit(c, kAtMost).gpus, first) << spec;
                ++checked;
                found_some += first > 0;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 3 * 3 * 3 * 3 * 2 * 2);
  EXPECT_GT(found_some, checked / 4);  // the sweep is not all "none"
  EXPECT_LT(found_some, checked);      // nor all small
}

}  // namespace
}  // namespace trainfit

namespace trainfit {
namespace {

// Beyond the largest job answered (max_gpus; default 16,384, the largest published training
// job) the answer is none, by brute force: every valid count up to the bound is checked.
TEST(MinGpus, NoAnswerBeyondTheLargestJob) {
  const std::string spec = "model=llama3-405b,gpu=h100,num_gpus=64,tensor_parallel=8,pipeline_parallel=8,zero_stage=3,recompute=full";
  const Config c = testing::config_of(spec);
  EXPECT_EQ(c.max_gpus, 16384);
  int64_t brute = 0;
  for (int64_t gpus = 64; gpus <= 16384 && brute == 0; gpus += 64) {
    if (fits_at(c, gpus)) brute = gpus;
  }
  ASSERT_GT(brute, 64);
  EXPECT_EQ(min_gpus_to_fit(c).gpus, brute);
  const MinGpus capped = min_gpus_to_fit(testing::config_of(spec + ",max_gpus=" + std::to_string(brute - 64)));
  EXPECT_EQ(capped.gpus, 0);
  EXPECT_NE(capped.reason.find("even at " + std::to_string(brute - 64) + " GPUs"), std::string::npos) << capped.reason;
  EXPECT_EQ(min_gpus_to_fit(testing::config_of(spec + ",max_gpus=" + std::to_string(brute))).gpus, brute);
  // The rule reads right when one model-parallel group spans nodes.
  EXPECT_EQ(min_gpus_rule(c), "multiples of 64 GPUs (tensor x pipeline x context parallel), in whole 8-GPU nodes "
                              "(gpus_per_node=8, the default)");
}

// Tensor parallelism without sequence parallelism: the advice offers it (Korthikanti et al. 4.2.2).
TEST(MinGpus, AdviceOffersSequenceParallelWithTensorParallel) {
  const Config c = testing::config_of("model=llama3-405b,gpu=h100,num_gpus=512,tensor_parallel=8,"
                                      "pipeline_parallel=8,zero_stage=1,recompute=full");
  ASSERT_FALSE(c.sp);
  bool offered = false;
  for (const Advice& a : advise(c)) offered = offered || a.field() == "sequence_parallel";
  EXPECT_TRUE(offered);
}

}  // namespace
}  // namespace trainfit
