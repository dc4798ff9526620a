// Buffers that live in one phase only: unsharded FSDP/ZeRO-3 units,
// recompute working sets, gradient buffers, loss buffers, communication
// buckets and optimizer-step temporaries.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "model.h"

namespace trainfit::model {

namespace {

// The dtype FSDP/ZeRO-3 gathers in, per parameter: fp32 runs gather fp32, everything else
// 16-bit (FSDP MixedPrecision param_dtype=bf16; DeepSpeed fp16 partitions); FSDP without a
// mixed-precision policy gathers what it stores (LitGPT >= 0.5.11 LoRA: fully_shard, no
// MixedPrecisionPolicy, fp32 parameters under bf16-mixed).
double gathered_bytes(const Config& c, const StateBytes& b) {
  double stored = b.weight, rest = b.weight;  // a frozen base: the layers' linears as loaded
  if (c.adapter != Adapter::kNone) base_bytes(c, &stored, &rest);
  return !c.fsdp_mixed_precision ? stored : c.precision == Precision::kFp32 ? 4.0 : 2.0;
}

// Parameters DeepSpeed ZeRO-3 keeps gathered for good: those of at most
// stage3_param_persistence_threshold elements (runtime/zero/parameter_offload.py at v0.16.4,
// L256-274), re-gathered after each optimizer step: the norms' weights and the small biases.
double zero3_persistent_elements(const Config& c, const StageParams& p) {
  const Geometry& g = c.geo;
  auto kept = [&](double numel, double count) { return numel <= c.zero3.persistence_threshold ? numel * count : 0.0; };
  const double layers = static_cast<double>(p.layers), h = static_cast<double>(g.hidden);
  const double q = static_cast<double>(g.heads * g.head_size()), kv = static_cast<double>(g.kv_heads * g.head_size());
  double n = kept(h, 2.0 * layers) + (p.last ? kept(h, 1.0) : 0.0);
  if (g.bias != Bias::kNone) n += kept(q, layers) + kept(kv, 2.0 * layers);
  if (g.bias == Bias::kAll) n += kept(h, 2.0 * layers) + kept(static_cast<double>(g.ffn), layers);
  return n;
}

// DeepSpeed ZeRO-3's gathered parameters, in elements, in steady state (from the second step, once
// the trace is recorded; runtime/zero/partitioned_param_coordinator.py at v0.16.4): the prefetcher,
// called from every module's hook, gathers ahead until stage3_max_live_parameters are gathered
// (L381-382; the prefetch bucket sets only how fast); a released module's parameters stay when
// used again within stage3_max_reuse_distance elements (L546-552: about half of it across the
// forward-backward turn); on top, the tensor being run. Persistent parameters come apart. With
// gradient accumulation the embedding, which has no post-backward hook, stays gathered into the
// next micro-batch uncounted by the window (layout.cpp: all releases but v0.16.0-v0.16.7).
double zero3_gathered_elements(const Config& c, const StageParams& p, double all) {
  const double persistent = zero3_persistent_elements(c, p);
  const double window = std::max(c.zero3.prefetch_bucket > 0 ? c.zero3.max_live : 0.0, c.zero3.max_reuse_distance / 2.0);
  double gathered = std::min(all - persistent, p.largest_tensor + window);
  if (c.num_microbatches > 1 && p.first && c.zero3.embedding_outside_window) gathered = std::min(all - persistent, gathered + p.embedding);
  return gathered + persistent;
}

// Unsharded FSDP/ZeRO-3 units in forward and backward (fsdp_units_fwd, fsdp_units_bwd).
void fsdp_units(const Config& c, const StageParams& p, const StateBytes& b, Transients& x) {
  const double gathered = gathered_bytes(c, b);
  const double all = p.dense + p.experts;
  // A 4-bit base is gathered as it is stored: bitsandbytes' NF4 in its quant_storage dtype,
  // GPTQ's packed int32 viewed as 16-bit Parameters (fms-acceleration accelerated-peft
  // autogptq_utils.py, build_patch_to_view_tensor_to_parameter_for_fsdp_gptq). The largest
  // unit in bytes is then a 16-bit (un)embedding, unless FSDP1 keeps those in its root unit.
  double linear = 0, rest = 0;
  if (c.adapter != Adapter::kNone) base_bytes(c, &linear, &rest);
  const bool four_bit = c.adapter != Adapter::kNone && linear < 1.0;
  const bool root_unit = c.fsdp_version == 1 && c.sharding != Sharding::kZero;
  const double vocab_unit = root_unit ? 0.0 : gathered * std::max(p.embedding, p.head);
  const double unit_bytes = four_bit ? std::max(linear * p.per_layer, vocab_unit) : gathered * p.largest_unit;
  if (c.zero_stage == 3 && c.sharding != Sharding::kZero && c.pp > 1) {
    // FSDP under pipeline parallelism (torchtitan parallelize.py apply_fsdp: no reshard
    // after forward with PP; torch.distributed.pipelining stage.py
    // backward_maybe_with_nosync: gradient sync only on the last micro-batch): the stage's
    // parameters stay gathered through the step and its unsharded gradients accumulate
    // in the reduce dtype (fp32) until the last micro-batch.
    x.fsdp_units_fwd = gathered * all;
    x.fsdp_units_bwd = gathered * all + 4.0 * all;
  } else if (c.zero_stage == 3 && c.sharding == Sharding::kZero) {
    // DeepSpeed gathers parameter by parameter, not in layer units; backward adds the current
    // layer's 16-bit gradients before they enter the reduce bucket.
    const double elements = zero3_gathered_elements(c, p, all);
    const double bytes = four_bit ? linear : gathered;
    x.fsdp_units_fwd = bytes * elements;
    x.fsdp_units_bwd = bytes * elements + b.grad * p.largest_unit;
  } else if (c.zero_stage == 3 && c.sharding != Sharding::kFsdpGradOp) {
    // Current unit + one prefetched unit; backward adds the current unit's
    // unsharded gradient before reduce-scatter (DeepSpeed estimate_zero3: 4 B x
    // largest layer; llm-analysis max(fwd_prefetch, bwd_prefetch)).
    x.fsdp_units_fwd = 2.0 * unit_bytes;
    x.fsdp_units_bwd = 2.0 * unit_bytes + b.grad * p.largest_unit;
    // FSDP1 does not reshard the root unit after forward (its parameters outside the wrapped
    // blocks: embedding, final norm, LM head), so it stays gathered through the step
    // (torch/distributed/fsdp/_runtime_utils.py: the root is not resharded after forward);
    // with CPU offload each unit's shard is also copied to the GPU before its all-gather.
    if (root_unit) {
      const double root = gathered * (p.embedding + p.head);
      const double shard = c.offload_params ? unit_bytes / static_cast<double>(dense_shard_group(c)) : 0.0;
      x.fsdp_units_fwd += root + shard;
      x.fsdp_units_bwd += root + shard;
    }
  } else if (c.sharding == Sharding::kFsdpGradOp) {
    // SHARD_GRAD_OP: parameters stay unsharded from forward through backward.
    x.fsdp_units_fwd = gathered * all;
    x.fsdp_units_bwd = gathered * all + b.grad * p.largest_unit;
  }
  if (c.adapter != Adapter::kNone) {
    x.fsdp_units_bwd = x.fsdp_units_fwd;  // a frozen unit has no gradient...
    if (c.frozen_unit_grads != FrozenUnitGrads::kNone) {
      // ...unless it mixes frozen and trainable weights (config.h FrozenUnitGrads): the
      // current unit's whole gradient, in its stored dtype, before it is reduced or added.
      x.fsdp_units_bwd += linear * p.per_layer;
    }
  }
}

// Backward of one layer: its rematerialized activations (full: the whole layer;
// selective: the core attention). [derived]
double recompute_working_set(const Config& c, const StageParams& p) {
  double bytes = 0;
  if (c.recompute == Recompute::kFull || c.recompute == Recompute::kOp) {
    // The checkpointed layer is rematerialized whole in backward (op-level: its
    // saved ops' outputs are reused, counted in the saved activations already).
    bytes = layer_bytes(c, Recompute::kNone) - (c.recompute == Recompute::kOp ? layer_bytes(c, Recompute::kOp) : 0.0);
    // Recomputing under autocast casts (and saves) the layer's weights again.
    if (c.precision == Precision::kBf16Amp && !weights_sharded(c)) {
      bytes += 2.0 * p.layer_linear / static_cast<double>(std::max<int64_t>(1, p.layers));
    }
  }
  if (c.recompute == Recompute::kSelective) bytes = core_attention_bytes(c);
  return std::max(0.0, bytes);
}

// Trainable experts in transformers' loop: each expert's weight gradients appear as its backward
// ends and its saved tensors go, one expert after another, so the layer's expert gradients
// outgrow what its finished experts free by E x g - (E-1) x s at the last one (g: one expert's
// gradients, s: its saved tensors and, under autocast, its saved 16-bit weight copies; balanced
// routing). Unsharded gradients only (ZeRO-0/1).
double expert_gradients_in_turn(const Config& c) {
  const Geometry& g = c.geo;
  if (!c.moe_expert_loop || g.experts == 0 || c.adapter != Adapter::kNone || c.zero_stage >= 2) return 0.0;
  const double experts = static_cast<double>(g.experts);
  const double linears = g.mlp == Mlp::kSwiGlu ? 3.0 : 2.0;
  const double weights = linears * static_cast<double>(g.hidden) * static_cast<double>(g.moe_ffn);
  const double one_grads = state_bytes(c).grad * weights;
  const double copy_bytes = c.precision == Precision::kBf16Amp ? 2.0 : 0.0;
  const double one_saved = mlp_saved_bytes(c) / experts + copy_bytes * weights;
  return std::max(one_grads, experts * one_grads - (experts - 1.0) * one_saved);
}

// Gradient buffers of the layer being back-propagated. Backward walks the layer in reverse:
// the MLP first (gradients of the layer output and input, two F-wide gradients), then
// attention, by when the MLP's saved tensors and the probabilities are freed; eager softmax
// backward holds two fp32 score-sized gradients (of its output and input). [derived;
// measured in docs/fidelity.md]
double layer_backward_bytes(const Config& c) {
  const Geometry& g = c.geo;
  const double tokens_here = tokens(c), hidden = static_cast<double>(g.hidden);
  const double tp = static_cast<double>(c.tp), sp = sp_divisor(c);
  const double act = act_bytes(c), residual = residual_bytes(c);
  // MoE: the k routed copies of each token run through the experts. In transformers' loop over the
  // experts (moe_expert_loop) backward finishes one expert before the next (autograd runs the
  // later-created chain first), so one expert's share of them, balanced routing assumed.
  double ffn = static_cast<double>(g.ffn);
  if (g.experts > 0) {
    ffn = static_cast<double>(g.top_k * g.moe_ffn);
    if (c.moe_expert_loop) ffn /= static_cast<double>(g.experts);
  }
  double bytes = 2.0 * residual * tokens_here * hidden / sp + 2.0 * act * tokens_here * ffn / tp;
  if (c.attention == Attention::kEager) {
    const double scores = static_cast<double>(g.heads) / tp * tokens_here * static_cast<double>(c.seq_length);
    const double freed = mlp_saved_bytes(c) + (c.recompute == Recompute::kNone || c.recompute == Recompute::kFull ? act * scores : 0.0);
    bytes = std::max(bytes, 8.0 * scores - freed);
  }
  return bytes + expert_gradients_in_turn(c) + nf4_dequantized_weight_bytes(c);
}

// The loss on the last stage: logits alive beside the loss in forward (loss_forward), the
// logits' gradient in backward (loss_backward), logits the loop keeps (held_logits).
void loss_buffers(const Config& c, Transients& x) {
  const Geometry& g = c.geo;
  const double tokens_here = tokens(c), hidden = static_cast<double>(g.hidden);
  const double act = act_bytes(c);
  const double vocab = static_cast<double>(g.vocab) / static_cast<double>(c.tp);  // this rank's share
  const double softmax_bytes = (c.logits_fp32 || act == 4.0) ? 4.0 : act;
  switch (c.loss) {
    case Loss::kStandard:
      if (c.compile_loss) {
        // Fused CE: no intermediates in forward; backward writes the logits' gradient.
        if (c.held_logits) x.held_logits = act * tokens_here * vocab;
        x.loss_backward = act * tokens_here * vocab;
      } else if (c.ops == Ops::kEager) {
        // HF ForCausalLMLoss: the (upcast) logits stay referenced by the model output
        // through backward; forward also holds the shifted contiguous copy (or, during
        // the upcast, the low-precision logits); backward nll's dense gradient and
        // log_softmax_backward's output (litgpt PR #2311).
        // Measured (tests/fidelity): at log_softmax the shifted contiguous copy, the
        // model's 16-bit logits (still referenced by its forward) and, unless the loop
        // holds them, their fp32 upcast are all alive together.
        const double shifted = shifts_logits(c) ? tokens_here - static_cast<double>(c.micro_batch) : tokens_here;
        const double shifted_copy = shifts_logits(c) ? softmax_bytes * shifted * vocab : 0.0;
        const double upcast = softmax_bytes > act ? softmax_bytes * tokens_here * vocab : 0.0;
        // Upcast inside the model's forward (HF < 4.46, modeling_llama.py `logits.float()`): the
        // 16-bit logits live only during the cast, before the shifted copy exists, and the model
        // returns the upcast. From 4.46 the upcast is ForCausalLMLoss's own local (loss/loss_utils.py)
        // and the model returns its 16-bit logits: that is what a loop keeping the output holds.
        const bool returns_upcast = c.logits_upcast == LogitsUpcast::kInForward;
        const double low_precision = upcast > 0.0 ? act * tokens_here * vocab : 0.0;
        if (c.held_logits) x.held_logits = (returns_upcast ? softmax_bytes : act) * tokens_here * vocab;
        const double beside_upcast = returns_upcast ? std::max(low_precision, shifted_copy) : shifted_copy + low_precision;
        const double held_here = !c.held_logits ? 0.0 : returns_upcast ? upcast : low_precision;  // in held_logits
        x.loss_forward = beside_upcast + upcast - held_here;
        x.loss_backward = 2.0 * softmax_bytes * shifted * vocab;
        // torch's loss parallel (torchtitan with TP: vocab-sharded DTensor logits) runs nll's
        // and log_softmax's backward in one handler, (zeros_like(x).index_put_ + exp(x)) *
        // grad: the gradient, exp(x) and their sum beside the saved x, one buffer more
        // (torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward).
        if (dtensor_tp(c)) x.loss_backward += softmax_bytes * shifted * vocab;
      } else {
        // Megatron's vocab-parallel CE (core/tensor_parallel/cross_entropy.py): the fp32
        // upcast becomes the saved softmax in place (exp_, div_), and backward turns that
        // softmax into the gradient in place: beside it only the low-precision logits in
        // forward and their gradient in backward.
        x.loss_forward = act * tokens_here * vocab;
        x.loss_backward = act * tokens_here * vocab;
        if (c.held_logits) x.held_logits = act * tokens_here * vocab;  // the model's output, as returned
      }
      break;
    case Loss::kChunked: {
      // One chunk at a time: torchtune CEWithChunkedOutputLoss splits the sequence in 8
      // and upcasts each; LitGPT chunked_cross_entropy takes 128 tokens per sequence and
      // does not upcast (litgpt/utils.py).
      if (c.held_logits) x.held_logits = act * tokens_here * vocab;  // the chunks the model returned
      const bool litgpt = c.framework == Framework::kLitgpt;
      const double chunk = litgpt ? std::min(tokens_here, 128.0 * static_cast<double>(c.micro_batch)) : tokens_here / 8.0;
      const double element = litgpt ? act : 4.0;
      x.loss_forward = 2.0 * element * chunk * vocab;
      x.loss_backward = 3.0 * element * chunk * vocab;
      break;
    }
    case Loss::kFused: {
      // One chunk of next_pow2(ceil(BT / ceil(V/h))) tokens at a time (Liger FLCE).
      const double chunk_tokens =
          std::min(tokens_here, std::exp2(std::ceil(std::log2(std::ceil(tokens_here / std::ceil(vocab / hidden))))));
      x.loss_forward = 2.0 * 4.0 * chunk_tokens * vocab;
      x.loss_backward = 0.0;
      break;
    }
  }
}

// Trainable parameters on this rank: the adapters only, when the base is frozen.
double trainable_params(const Config& c, const StageParams& p) {
  if (c.adapter == Adapter::kNone) return p.dense + p.experts;
  const AdapterShape shape = adapter_shape(c);
  return adapter_trainable(shape, p) + modules_saved(shape, p);
}

// Gradient communication buckets (comm_buckets); DeepSpeed's all-gather bucket is returned
// apart, since it lives in the optimizer step.
double comm_buckets(const Config& c, const StageParams& p, const StateBytes& b, double trainable, Transients& x) {
  const bool data_parallel = c.num_gpus / (c.tp * c.pp) > 1;
  if (data_parallel && ddp_reduces(c)) {
    // torch DDP bucket_cap_mb=25, two in flight; no more than the gradients themselves.
    const double grad_bytes = c.adapter != Adapter::kNone ? c.adapter_bytes : b.grad;
    // Megatron's buckets are views of its contiguous grad buffer, reduced in place
    // (core/distributed/param_and_grad_buffer.py); torchtitan's DDP uses 100 MB buckets.
    const double bucket_mb = c.framework == Framework::kTorchtitan ? 100.0 : 25.0;
    x.comm_buckets = c.framework == Framework::kMegatron ? 0.0 : std::min(2.0 * bucket_mb * 1024 * 1024, trainable * grad_bytes);
    // PyTorch DDP's Reducer keeps its buckets, together as large as the gradients, from
    // construction on (torch/csrc/distributed/c10d/reducer.cpp initialize_buckets); measured
    // (tests/fidelity/hf_stack.py, torch 2.11, H200): +0.96 x the gradients, the same with
    // gradient_as_bucket_view=True under zero_grad(set_to_none=True); torch 1.13 on the CPU
    // (tests/fidelity, gloo): exactly the gradients, allocated at construction.
    if (c.ddp_full_buckets) x.comm_buckets = trainable * grad_bytes;
  }
  if (zero3_ipg_bucket(c)) {
    // ZeRO-3 with contiguous_gradients (the default) allocates its IPG bucket when the optimizer
    // is built and keeps it: reduce_bucket_size (default 5e8) elements in the model's dtype,
    // whatever the trainable size, on the GPU with or without offload_optimizer
    // (deepspeed/runtime/zero/stage3.py at v0.16.4, e2dc3eeb19, L536-540
    // __ipg_bucket_flat_buffer; zero/config.py reduce_bucket_size).
    x.comm_buckets = c.reduce_bucket_elements * (c.precision == Precision::kFp32 ? 4.0 : 2.0);
  }
  double allgather_bucket = 0;
  const bool zero12 = c.sharding == Sharding::kZero && (c.zero_stage == 1 || c.zero_stage == 2);
  if (zero12 && c.framework == Framework::kMegatron) {
    // Megatron's distributed optimizer (zero_stage 1): the terms it had before DeepSpeed's were
    // read from source, kept as they were until Megatron's own buffers are (issue 35).
    if (data_parallel) {
      const double all = p.dense + p.experts;
      x.comm_buckets = std::min(c.reduce_bucket_elements, all) * b.grad;
      allgather_bucket = std::min(5e8, all) * b.weight;
    }
  } else if (zero12) {
    // DeepSpeed ZeRO-1/2 with contiguous_gradients (the default): backward() allocates the IPG
    // bucket, reduce_bucket_size elements in the dtype of the parameters it trains, at any world
    // size, and independent_gradient_partition_epilogue releases it after backward
    // (deepspeed/runtime/zero/stage_1_and_2.py at v0.16.4, e2dc3eeb19, L2048-2061 and L677-680,
    // L802). overlap_comm (default off below ZeRO-3, zero/config.py) would add a second one.
    // After the step the updated partitions are gathered in place: allgather_bucket_size
    // allocates nothing (runtime/utils.py all_gather_dp_groups).
    const double dtype = c.adapter != Adapter::kNone ? c.adapter_bytes : b.weight;
    x.comm_buckets = c.reduce_bucket_elements * dtype;
  }
  return allgather_bucket;
}

// Optimizer step (torch/optim/adamw.py): the foreach implementation materializes one
// temporary per parameter (_multi_tensor: exp_avg_sq_sqrt); the single-tensor loop
// two of the largest tensor at a time (sqrt, then the division); fused kernels none.
// A 16-bit-grad regime upcasts gradients to fp32 (ZeRO section 3.2 "fused fp32 buffer").
double optimizer_step_bytes(const Config& c, const StageParams& p, const StateBytes& b, double trainable) {
  if (c.offload_optimizer || c.optimizer == Optimizer::kAdamW8bit) return 0.0;
  double owned = (p.dense / static_cast<double>(c.zero_stage >= 1 ? dense_shard_group(c) : 1)) +
                 (p.experts / static_cast<double>(c.zero_stage >= 1 ? expert_shard_group(c) : 1));
  if (c.adapter != Adapter::kNone) owned = trainable / static_cast<double>(c.zero_stage >= 1 ? dense_shard_group(c) : 1);
  const double state = c.adapter != Adapter::kNone ? c.adapter_bytes : c.precision == Precision::kBf16 ? 2.0 : 4.0;
  double bytes = 0.0;
  switch (c.optimizer_impl) {
    case OptimizerImpl::kForeach: bytes = owned * state; break;
    case OptimizerImpl::kLoop: bytes = 2.0 * state * std::min(owned, p.largest_tensor); break;
    case OptimizerImpl::kFused: bytes = 0.0; break;
  }
  if (c.adapter == Adapter::kNone && b.master > 0 && b.grad < 4.0) bytes += 4.0 * owned;
  return bytes;
}

// Ring context parallelism: K and V chunks in flight, send + receive (Megatron-LM
// context parallelism: ring attention passes K and V chunks between ranks). [derived]
double context_parallel_bytes(const Config& c) {
  if (c.cp <= 1) return 0.0;
  const Geometry& g = c.geo;
  const double kv = std::ceil(static_cast<double>(g.kv_heads) / static_cast<double>(c.tp)) * static_cast<double>(g.head_size());
  return 2.0 * 2.0 * act_bytes(c) * tokens(c) * kv;
}

}  // namespace

Transients stage_transients(const Config& c, const StageParams& p) {
  Transients x;
  const StateBytes b = state_bytes(c);
  fsdp_units(c, p, b, x);
  x.recompute = recompute_working_set(c, p);
  x.layer_backward = layer_backward_bytes(c);
  if (p.last) loss_buffers(c, x);
  const double trainable = trainable_params(c, p);
  const double allgather_bucket = comm_buckets(c, p, b, trainable, x);
  x.optimizer_step = optimizer_step_bytes(c, p, b, trainable) + allgather_bucket;
  x.context_parallel = context_parallel_bytes(c);
  x.autocast_cache = autocast_cache_bytes(c, p);
  return x;
}

Overheads overheads(const Config& c, double tensor_peak, const Transients& x) {
  Overheads o;
  if (!c.runtime_overhead) return o;
  // CUDA context, kernels and cuBLAS workspace: 300 MiB - 2 GiB (vram.asmirnov.xyz);
  // gpu_poor assumes 650 MB. We take 768 MiB.
  o.cuda_context = 768.0 * 1024 * 1024;
  // NCCL: ~544 MB per 2-rank communicator, ~688 MB per larger one (NVIDIA/nccl#964).
  auto communicator = [](int64_t ranks) { return ranks <= 1 ? 0.0 : ranks == 2 ? 544e6 : 688e6; };
  o.nccl = communicator(c.num_gpus / (c.tp * c.pp)) + communicator(c.tp) + communicator(c.pp) +
           communicator(c.cp) + communicator(c.ep);
  // cuBLAS workspace, allocated through the caching allocator: 32 MiB on sm90 (Hopper),
  // else :4096:2:16:8 = 8.125 MiB (PyTorch CublasHandlePool.cpp parseChosenWorkspaceSize);
  // Transformer Engine adds its own, 32 MiB on Hopper, 4 MiB before (TE module/base.py
  // get_cublas_workspace_size_bytes). The catalog's "architecture" says which GPU is which.
  const bool hopper = c.gpu_architecture == GpuArchitecture::kHopper;
  o.workspaces = hopper ? 32.0 * 1024 * 1024 : 8.125 * 1024 * 1024;
  if (c.ops == Ops::kFused) o.workspaces += hopper ? 32.0 * 1024 * 1024 : 4.0 * 1024 * 1024;
  // Caching-allocator reserve above the allocated peak: at least Megatron's x1.05 buffer
  // (theoretical_memory_usage.py), and at least the loss' forward buffers. Those are the
  // step's largest one-off allocations; the caching allocator keeps their freed segments
  // (c10/cuda/CUDACachingAllocator.cpp: freed blocks stay cached, and a block is split only
  // for requests that fit it), so the peak's own blocks come on top. Measured
  // (tests/fidelity/gpu/hf_stack-h200.json, transformers 5.17): reserved - allocated =
  // 214-458 MiB, median 396, where the loss' forward buffers are 375 MiB and 5% is 53-156.
  // With expandable segments (PYTORCH_CUDA_ALLOC_CONF expandable_segments:True) a stream's blocks
  // live in one segment that grows by mapping pages, and a freed block merges with its free
  // neighbours (CUDACachingAllocator.cpp ExpandableSegment, map_block / release_block): the loss'
  // freed buffers serve the peak's requests, and longer steps extend the segment rather than
  // take new ones. Only the 5% floor stays. Derived from the source; no GPU measurement yet.
  if (c.expandable_segments) {
    o.allocator = 0.05 * tensor_peak;
    return o;
  }
  o.allocator = std::max(0.05 * tensor_peak, x.loss_forward);
  // Steps whose lengths rise (a length curriculum, batches sorted by length): a cached block
  // serves only requests no larger than itself (CUDACachingAllocator.cpp get_free_block), so
  // each longer step takes new segments for its largest buffers while the shorter steps'
  // stay cached (no empty_cache). Over n evenly spaced lengths the earlier steps' largest
  // one-off buffers sum to (n-1)/2 of the longest step's. Measured (H200, 8 rising lengths,
  // tests/fidelity/gpu/hf_stack-h200-varying.json): reserved 2.6 x allocated. Steps of
  // varying length in random order measured no growth: the longest step's blocks are split.
  if (c.rising_lengths > 1) {
    o.allocator += std::max(x.loss_forward, x.loss_backward) * static_cast<double>(c.rising_lengths - 1) / 2.0;
  }
  return o;
}

}  // namespace trainfit::model
