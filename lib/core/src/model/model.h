// Internal interfaces between the estimator's parts; one concern per file.
#pragma once

#include "trainfit/config.h"
#include "trainfit/estimate.h"

namespace trainfit::model {

// Parameters one GPU of a pipeline stage holds before ZeRO/FSDP sharding (parameters.cpp).
struct StageParams {
  double dense = 0;         // TP-sharded + replicated parameters
  double experts = 0;       // routed-expert parameters (divided by EP and TP)
  double linear = 0;        // weights that enter a matmul (autocast/FP8 copies)
  double layer_linear = 0;  // ... of which inside the transformer layers
  double largest_unit = 0;  // largest FSDP/ZeRO-3 unit: one layer, or the (un)embedding
  double largest_tensor = 0;  // largest single parameter tensor
  double head = 0;            // final norm + LM head (their gradients come first in backward)
  double embedding = 0;       // input embedding (its gradient comes last)
  double per_layer = 0;       // one transformer layer (dense + experts on this rank)
  int64_t layers = 0;       // transformer layers on this stage
  bool first = true, last = true;
};
StageParams stage_params(const Config& c, bool first, bool last);

// Bytes per parameter of each model-state kind, unsharded (model_states.cpp).
struct StateBytes {
  double weight = 0, grad = 0, master = 0, optimizer = 0;
  double total() const { return weight + grad + master + optimizer; }
};
StateBytes state_bytes(const Config& c);
// Bytes per frozen base weight: of the layers' linears and of the rest (adapters.cpp).
void base_bytes(const Config& c, double* linear, double* rest);
int64_t dense_shard_group(const Config& c);
int64_t expert_shard_group(const Config& c);
// Model states on the GPU; *host gets what offload moves to host RAM.
ModelStates gpu_states(const Config& c, const StageParams& p, double* host);

// Whether gradient buffers live through the whole step. PyTorch with
// zero_grad(set_to_none=True) (its default) allocates them in backward; gradient
// accumulation, Megatron's main_grad buffers and DeepSpeed's partitions keep them.
bool grads_persist(const Config& c);

// min_gpus_to_fit without building the reason text when none is found (for advice), over
// the valid counts from at_least GPUs.
MinGpus search_min_gpus(const Config& c, int64_t at_most, bool explain, int64_t at_least = 1);

// `request` resolved at `gpus` GPUs with the caller's usable HBM (its headroom applied):
// the config a framework whose defaults vary with the GPU count runs there.
Result<Config> resolved_at(const Request& request, int64_t gpus, double capacity_bytes);

// What an estimate computes that does not change with num_gpus or seq_length (the two
// axes the profiles sweep): the parameter count, each stage's parameters and, when
// only num_gpus varies, each stage's saved activations (estimate.cpp).
struct SharedParts {
  ParamCounts params;
  double adapter_states_unsharded = 0;  // LoRA/QLoRA: the frozen base's states on one device
  StageParams first, last;              // pp == 1: `first` is the only stage
  bool has_activations = false;
  Activations first_activations, last_activations;
};
SharedParts shared_parts(const Config& c, bool with_activations);
// estimate(c) from parts computed for a config equal to c but for num_gpus (and, without
// activations, seq_length).
Breakdown estimate_with(const Config& c, const SharedParts& parts);
// A lower bound of estimate(c).per_gpu_total at a fraction of its cost: the first stage's
// model states. stage_memory's optimizer phase holds them plus terms that are never negative,
// and the reported peak is the larger stage's, plus overheads (estimate.cpp).
double states_floor(const Config& c);

// LoRA / QLoRA (adapters.cpp).
// Bytes per parameter of a 4-bit NF4 weight: 4-bit codes, one 8-bit absmax per 64
// weights, one fp32 factor per 256 absmax (double quantization): 4.127 bits.
constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
struct AdapterShape {
  double params_per_layer = 0;  // A and B of every target linear, on this rank (+ DoRA magnitudes)
  double params_embedding = 0, params_head = 0;  // LoRA on the embedding / the LM head
  double saved_embedding = 0, saved_head = 0;    // modules_to_save: trained in full
  double inputs_per_token = 0;  // summed input widths of the targets
  double outputs_per_token = 0;  // summed output widths of the targets
  double distinct_inputs_per_token = 0;  // ... counting a tensor read by several targets once
  double targets = 0;           // target linears per layer
};
AdapterShape adapter_shape(const Config& c);
double nf4_quant_state_bytes(const Config& c, const StageParams& p);  // bitsandbytes' QuantStates: never sharded
double nf4_saved_inputs_bytes(const Config& c);  // bitsandbytes 4-bit linears' saved inputs, one layer
double nf4_dequantized_weight_bytes(const Config& c);  // the 16-bit copy of the 4-bit weight being multiplied
ModelStates adapter_states(const Config& c, const StageParams& p);  // replaces the full-training states
double adapter_trainable(const AdapterShape& shape, const StageParams& p);  // adapter parameters on this stage
double modules_saved(const AdapterShape& shape, const StageParams& p);      // modules_to_save parameters on this stage
double adapter_activation_bytes(const Config& c);                   // one layer, one micro-batch

// Saved activations (activations.cpp).
double layer_bytes(const Config& c, Recompute mode);  // one layer, one micro-batch
double core_attention_bytes(const Config& c);          // eager s^2 terms of one layer
double attention_interior_bytes(const Config& c, Recompute mode);  // Q, K, V and the core
double op_level_bytes(const Config& c);                // one layer under op-level checkpointing
double attention_mask_bytes(const Config& c);          // eager attention's causal mask
double mlp_saved_bytes(const Config& c);               // one layer's MLP block, one micro-batch
Activations stage_activations(const Config& c, const StageParams& p);

// Phase-local buffers and fixed overheads (transients.cpp).
Transients stage_transients(const Config& c, const StageParams& p);
// The caching allocator's reserve follows the step's largest one-off buffers (the loss'),
// given in x, and grows with rising step lengths.
Overheads overheads(const Config& c, double tensor_peak, const Transients& x);

// Bytes per activation element: fp32 runs store 4, the rest 2 (FP8 GEMM inputs: 1).
inline double act_bytes(const Config& c) { return c.precision == Precision::kFp32 ? 4.0 : 2.0; }
inline double gemm_input_bytes(const Config& c) { return c.precision == Precision::kFp8 ? 1.0 : act_bytes(c); }
// ZeRO-3 / FSDP keep parameters sharded at rest (model_states.cpp).
bool weights_sharded(const Config& c);
double autocast_cache_bytes(const Config& c, const StageParams& p);
// The residual stream: fp32 when the layers run on fp32 parameters (autocast leaves
// adds and norms in fp32); ZeRO-3/FSDP mixed precision gathers bf16 parameters,
// so the whole forward, residual included, runs in bf16 (FSDP2 MixedPrecisionPolicy).
inline double residual_bytes(const Config& c) {
  // fp32 embeddings and norms (QLoRA's prepare_model_for_kbit_training) make the stream fp32.
  if (c.kbit_fp32_rest) return 4.0;
  if (c.precision == Precision::kFp32) return 4.0;
  if (c.precision == Precision::kBf16Amp && (!weights_sharded(c) || !c.fsdp_mixed_precision)) return 4.0;
  return act_bytes(c);
}
// Tokens of one micro-batch on one GPU (context parallelism splits the sequence).
inline double tokens(const Config& c) {
  return static_cast<double>(c.micro_batch) * static_cast<double>(c.seq_length / c.cp);
}
// Whether the loss copies the shifted logits (resolved in training.cpp: HF < 4.49, eager ops).
inline bool shifts_logits(const Config& c) { return c.logits_shift_copy; }
// Gradients all-reduced through PyTorch DDP-style buckets: no ZeRO, or torch's
// ZeroRedundancyOptimizer, which shards only the optimizer over a DDP model
// (torch/distributed/optim/zero_redundancy_optimizer.py).
inline bool ddp_reduces(const Config& c) { return c.zero_stage == 0 || c.sharding == Sharding::kZeroRedundancy; }
// DeepSpeed ZeRO-3's gradient bucket, allocated with the optimizer and kept (transients.cpp).
inline bool zero3_ipg_bucket(const Config& c) { return c.zero_stage == 3 && c.sharding == Sharding::kZero; }
// DeepSpeed ZeRO-3's gradient partitions live where its optimizer steps (stage3.py self.device).
inline bool zero3_grads_follow_optimizer(const Config& c) { return zero3_ipg_bucket(c) && c.offload_optimizer; }
// Divisor of tensors in the "replicated" region: sequence parallelism splits them by t.
inline double sp_divisor(const Config& c) { return c.sp ? static_cast<double>(c.tp) : 1.0; }
// Tensor parallelism through torch DTensor plans (torchtitan): loss parallel, and the LM head's
// ColwiseParallel input gathered over the sequence.
inline bool dtensor_tp(const Config& c) { return c.framework == Framework::kTorchtitan && c.tp > 1; }

}  // namespace trainfit::model
