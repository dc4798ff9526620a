// DeepSpeed ZeRO's buffers, each expected value worked out from DeepSpeed's own source at
// v0.16.4 (commit e2dc3eeb19), not from trainfit's output.
#include "test_util.h"

namespace trainfit {
namespace {

using testing::estimate_of;

// Llama-3-8B: 8,030,261,248 parameters (32 layers of 218,112,000 plus two 525,336,576
// embeddings), counted from its geometry.
constexpr double kP = 8030261248.0;
const std::string kDs = "model=llama3-8b,seq_length=2048,micro_batch=1,gpu=h100,framework=deepspeed,precision=bf16,"
                        "sharding=zero,recompute=full,";

TEST(DeepSpeedZero3, OffloadOptimizerTakesTheGradientPartitionsToTheHost) {
  // stage3.py L261: self.device is the CPU under offload_optimizer; L542-557: the gradient
  // partitions (grad_partitions_flat_buffer, P/N in the bf16 accumulation dtype, engine.py
  // get_data_types) are allocated there. L3031 (estimate_zero3_model_states_mem_needs,
  // cpu_offload without cpu_offload_params): GPU = largest layer + int(2 * P / N), the 16-bit
  // parameters alone. Host: fp32 master 4 + Adam 8 + fp32 gradients 4 (initialize_optimizer_states
  // L1060-1064, on self.device)
  // + the 16-bit partitions 2 = 18 bytes per parameter, / N.
  const double n = 8;
  const Breakdown on_gpu = estimate_of(kDs + "num_gpus=8,zero_stage=3");
  const Breakdown offload = estimate_of(kDs + "num_gpus=8,zero_stage=3,offload_optimizer=true");
  EXPECT_DOUBLE_EQ(on_gpu.stage.states.grads, 2.0 * kP / n);  // no offload: the partitions on the GPU
  EXPECT_DOUBLE_EQ(offload.stage.states.grads, 0.0);
  EXPECT_DOUBLE_EQ(offload.stage.states.total(), 2.0 * kP / n);
  EXPECT_DOUBLE_EQ(offload.host_offload_per_gpu, (4.0 + 8.0 + 4.0 + 2.0) * kP / n);
  // The IPG bucket stays on the GPU either way (L536-540): reduce_bucket_size x 2 bytes.
  EXPECT_DOUBLE_EQ(offload.stage.transients.comm_buckets, 5e8 * 2.0);
  // Both offloads (L3023): nothing of the model states on the GPU.
  const Breakdown both = estimate_of(kDs + "num_gpus=8,zero_stage=3,offload_optimizer=true,offload_params=true");
  EXPECT_DOUBLE_EQ(both.stage.states.total(), 0.0);
  EXPECT_DOUBLE_EQ(both.host_offload_per_gpu, (2.0 + 4.0 + 8.0 + 4.0 + 2.0) * kP / n);
}

TEST(DeepSpeedZero12, TheIpgBucketIsAllocatedAtAnyWorldSize) {
  // stage_1_and_2.py L2048-2061: backward() allocates reduce_bucket_size elements in the
  // parameters' dtype whenever contiguous_gradients is on (the default), whatever the world
  // size and the model's size; grads_in_partition (L1351) is the rank's whole partition,
  // P x 2 bytes on one rank.
  for (const char* stage : {"zero_stage=1", "zero_stage=2"}) {
    const Breakdown one = estimate_of(kDs + "num_gpus=1," + stage);
    EXPECT_DOUBLE_EQ(one.stage.transients.comm_buckets, 5e8 * 2.0) << stage;
    const Breakdown set = estimate_of(kDs + "num_gpus=1,reduce_bucket_size=2e8," + stage);
    EXPECT_DOUBLE_EQ(set.stage.transients.comm_buckets, 2e8 * 2.0) << stage;
  }
  EXPECT_DOUBLE_EQ(estimate_of(kDs + "num_gpus=1,zero_stage=2").stage.states.grads, 2.0 * kP);
  // GPT-2's 124M parameters are fewer than the bucket's 5e8 elements: torch.empty takes them all.
  const Breakdown small = estimate_of("model=gpt2,seq_length=1024,micro_batch=1,framework=deepspeed,precision=bf16,"
                                      "sharding=zero,num_gpus=2,zero_stage=2");
  EXPECT_DOUBLE_EQ(small.stage.transients.comm_buckets, 5e8 * 2.0);
}

TEST(DeepSpeedZero12, TheAllGatherAfterTheStepAllocatesNothing) {
  // runtime/utils.py all_gather_dp_groups: all_gather_into_tensor writes the updated 16-bit
  // partitions straight into the flat buffer the parameters view, whatever
  // allgather_bucket_size says. What the step adds is the fp32 upcast of the rank's 16-bit
  // gradient partition (DeepSpeed's fused Adam: no foreach temporaries), 4 bytes x P / N.
  const double n = 8;
  const Breakdown b = estimate_of(kDs + "num_gpus=8,zero_stage=2");
  const Breakdown set = estimate_of(kDs + "num_gpus=8,zero_stage=2,allgather_bucket_size=2e8");
  EXPECT_DOUBLE_EQ(b.stage.transients.optimizer_step, 4.0 * kP / n);
  EXPECT_DOUBLE_EQ(set.per_gpu_total, b.per_gpu_total);
}

}  // namespace
}  // namespace trainfit
