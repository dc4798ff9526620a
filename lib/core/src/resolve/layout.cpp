// Resolve step 3: the layout — parallelism, sharding and the hardware — and the
// divisibility rules that min-GPU search and sweeps re-check as they vary num_gpus.
#include <cmath>

#include "choices.h"
#include "release.h"
#include "enum_names.h"
#include "steps.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace resolving {
namespace {

constexpr Choice<ReportStage> kReportStages[] = {
    {"critical", ReportStage::kCritical}, {"first", ReportStage::kFirst}, {"last", ReportStage::kLast}};

// FSDP1 registers a frozen unit's reshard hook with register_multi_grad_hook on the unit's
// inputs (torch 2.x distributed/fsdp/_runtime_utils.py _register_post_backward_reshard_only_hook).
// Inside a reentrant checkpoint (transformers' gradient_checkpointing_enable: use_reentrant=True,
// the checkpoint around each wrapped layer) those inputs are the leaves CheckpointFunction.backward
// detaches, and the hook's closure holds their AccumulateGrad nodes (autograd/graph.py), which
// hold the leaves: each layer's input and gradient live until _post_backward_final_callback.
// PEFT's fsdp_auto_wrap_policy (utils/other.py) puts the adapters in units of their own, so
// the layer units are frozen.
Result<bool> resolve_held_layer_inputs(const Request& r, Config& c, Notes& notes) {
  const bool fsdp1 = c.zero_stage == 3 && c.sharding != Sharding::kZero && c.fsdp_version == 1;
  const bool applies = fsdp1 && c.recompute == Recompute::kFull && c.adapter != Adapter::kNone &&
                       c.frozen_unit_grads == FrozenUnitGrads::kNone && c.use_reentrant;
  if (r.held_layer_inputs) {
    if (*r.held_layer_inputs && !(fsdp1 && c.recompute == Recompute::kFull)) {
      return make_error(ErrorCode::kInconsistent, "held_layer_inputs",
                        "held_layer_inputs=true needs FSDP1 (sharding=fsdp-full or fsdp-grad-op, fsdp_version=1) and recompute=full");
    }
    c.held_layer_inputs = *r.held_layer_inputs;
    return true;
  }
  c.held_layer_inputs = applies && c.framework == Framework::kHf;
  if (c.held_layer_inputs) {
    notes.push_back("held_layer_inputs=true (hf on FSDP1: the reentrant checkpoint's inputs and their gradients are "
                    "kept to the end of backward by FSDP's reshard hook on frozen layer units)");
  }
  return true;
}

// A DeepSpeed bucket size in elements: an integer from 1 to 1e12, written as DeepSpeed
// configs write it (500000000, 5e8); "auto" where allowed.
constexpr double kMaxBucketElements = 1e12;

bool bucket_elements(const std::string& v, double* out) {
  int64_t n = 0;
  double x = 0;
  if (parse_int(v, &n)) x = static_cast<double>(n);
  else if (!parse_number(v, &x) || x != std::floor(x)) return false;
  if (x < 1 || x > kMaxBucketElements) return false;
  *out = x;
  return true;
}

// DeepSpeed's gradient bucket: elements, or "auto", which transformers (integrations/deepspeed.py
// trainer_config_finalize) and accelerate (_prepare_deepspeed) fill with hidden_size^2.
Result<bool> resolve_reduce_bucket(const Request& r, Config& c) {
  if (!r.reduce_bucket_size) return true;
  const std::string& v = *r.reduce_bucket_size;
  if (v == "auto") {
    c.reduce_bucket_elements = static_cast<double>(c.geo.hidden) * static_cast<double>(c.geo.hidden);
  } else if (!bucket_elements(v, &c.reduce_bucket_elements)) {
    return invalid("reduce_bucket_size", v, "integer from 1 to 1e12, or auto");
  }
  return true;
}

// allgather_bucket_size is checked and changes nothing: ZeRO-1/2 gathers the updated 16-bit
// partitions with all_gather_into_tensor straight into its flat buffer, allocating nothing
// (deepspeed/runtime/utils.py all_gather_dp_groups at v0.16.4, e2dc3eeb19; the bucketed path,
// for torch without all_gather_into_tensor, gathers into views of that buffer too). transformers
// and accelerate fill "auto" only for reduce_bucket_size, so "auto" is not accepted here.
Result<bool> check_allgather_bucket(const Request& r) {
  double elements = 0;
  if (r.allgather_bucket_size && !bucket_elements(*r.allgather_bucket_size, &elements)) {
    return invalid("allgather_bucket_size", *r.allgather_bucket_size, "integer from 1 to 1e12");
  }
  return true;
}

// DeepSpeed ZeRO-3's gathering knobs: elements from 0 (0.9 x hidden^2 and 10 x hidden where
// transformers' integrations/deepspeed.py trainer_config_finalize fills "auto", as accelerate does).
Result<bool> resolve_zero3_knobs(const Request& r, Config& c) {
  const double h = static_cast<double>(c.geo.hidden);
  struct Knob {
    const std::optional<std::string>& text;
    const char* field;
    double* out;
    double auto_value;  // 0: "auto" is not a value DeepSpeed's users get filled
  };
  const Knob knobs[] = {
      {r.stage3_prefetch_bucket_size, "stage3_prefetch_bucket_size", &c.zero3.prefetch_bucket, std::floor(0.9 * h * h)},
      {r.stage3_max_live_parameters, "stage3_max_live_parameters", &c.zero3.max_live, 0},
      {r.stage3_max_reuse_distance, "stage3_max_reuse_distance", &c.zero3.max_reuse_distance, 0},
      {r.stage3_param_persistence_threshold, "stage3_param_persistence_threshold", &c.zero3.persistence_threshold, 10.0 * h},
  };
  // The embedding has no post-backward hook and stays gathered into the next micro-batch, outside
  // the window's count, except in v0.16.0-v0.16.7, whose counter resets only at optimizer steps
  // (partitioned_param_coordinator.py; reset per forward again from v0.16.8, PR #7258).
  int release[3] = {0, 0, 0};
  c.zero3.embedding_outside_window = !(c.framework == Framework::kDeepSpeed && parse_release(c.framework_version, release) &&
                                       !before(release, 0, 16) && before(release, 0, 16, 8));
  for (const Knob& k : knobs) {
    if (!k.text) continue;
    const bool zero = *k.text == "0";
    if (*k.text == "auto" && k.auto_value > 0) *k.out = k.auto_value;
    else if (zero) *k.out = 0;
    else if (!bucket_elements(*k.text, k.out)) {
      return invalid(k.field, *k.text, k.auto_value > 0 ? "integer from 0 to 1e12, or auto" : "integer from 0 to 1e12");
    }
  }
  return true;
}

Result<bool> resolve_parallelism(const Request& r, Config& c, Notes& notes) {
  const Geometry& g = c.geo;
  Error e;
  if (!take_int(r.tensor_parallel, "tensor_parallel", 1, 4096, &c.tp, &e) ||
      !take_int(r.pipeline_parallel, "pipeline_parallel", 1, 100000, &c.pp, &e) ||
      !take_int(r.virtual_pipeline, "virtual_pipeline", 1, 100000, &c.vpp, &e) ||
      !take_int(r.context_parallel, "context_parallel", 1, kMaxSeq, &c.cp, &e) ||
      !take_int(r.expert_parallel, "expert_parallel", 1, 65536, &c.ep, &e) ||
      !take_int(r.gpus_per_node, "gpus_per_node", 1, 4096, &c.gpus_per_node, &e) ||
      !take_int(r.max_gpus, "max_gpus", 1, int64_t{1} << 20, &c.max_gpus, &e) ||
      !take_enum(r.sharding, "sharding", kShardings, &c.sharding, &e) ||
      !take_enum(r.report_stage, "report_stage", kReportStages, &c.report_stage, &e)) {
    return e;
  }
  if (r.sequence_parallel) c.sp = *r.sequence_parallel;
  if (r.zero_stage) {
    if (*r.zero_stage < 0 || *r.zero_stage > 3) return invalid("zero_stage", std::to_string(*r.zero_stage), "0|1|2|3");
    c.zero_stage = static_cast<int>(*r.zero_stage);
  }
  if (c.sharding != Sharding::kZero) {
    const int implied = c.sharding == Sharding::kZeroRedundancy ? 1 : c.sharding == Sharding::kFsdpGradOp ? 2 : 3;
    if (r.zero_stage && c.zero_stage != implied) {
      return make_error(ErrorCode::kInconsistent, "zero_stage",
                        "zero_stage=" + std::to_string(c.zero_stage) + " contradicts sharding='" + *r.sharding +
                            "' (which shards like ZeRO-" + std::to_string(implied) + "); give one of them");
    }
    c.zero_stage = implied;
  }
  // FSDP1 where the framework wraps with FullyShardedDataParallel (accelerate's default
  // fsdp_version 1; Lightning's FSDPStrategy); FSDP2 fully_shard in torchtitan and torchtune.
  c.fsdp_version = c.framework == Framework::kHf || c.framework == Framework::kLitgpt ? 1 : 2;
  if (r.fsdp_version) {
    if (*r.fsdp_version != 1 && *r.fsdp_version != 2) return invalid("fsdp_version", std::to_string(*r.fsdp_version), "1|2");
    c.fsdp_version = static_cast<int>(*r.fsdp_version);
  }
  if (r.fsdp_mixed_precision) c.fsdp_mixed_precision = *r.fsdp_mixed_precision;
  if (!take_enum(r.frozen_unit_grads, "frozen_unit_grads", kFrozenUnitGrads, &c.frozen_unit_grads, &e)) return e;
  Result<bool> held = resolve_held_layer_inputs(r, c, notes);
  if (!held) return held;
  Result<bool> bucket = resolve_reduce_bucket(r, c);
  if (!bucket) return bucket;
  Result<bool> allgather = check_allgather_bucket(r);
  if (!allgather) return allgather;
  Result<bool> knobs = resolve_zero3_knobs(r, c);
  if (!knobs) return knobs;
  if (c.gpus_per_node == 0) {
    c.gpus_per_node = kDefaultGpusPerNode;
    c.gpus_per_node_assumed = true;
    notes.push_back("gpus_per_node=" + std::to_string(kDefaultGpusPerNode) +
                    " (whole nodes beyond one, as trainfit.conf's default)");
  }
  if (c.tp == 1 && c.sp) c.sp = false;  // sequence parallelism is a TP feature
  if (g.heads % c.tp != 0) {
    return invalid("tensor_parallel", std::to_string(c.tp), "a divisor of num_heads=" + std::to_string(g.heads));
  }
  if (c.pp > g.layers) {
    return invalid("pipeline_parallel", std::to_string(c.pp), "at most num_layers=" + std::to_string(g.layers));
  }
  if (c.vpp > 1 && g.layers % (c.pp * c.vpp) != 0) {
    return invalid("virtual_pipeline", std::to_string(c.vpp),
                   "a value with num_layers=" + std::to_string(g.layers) + " divisible by pipeline_parallel*virtual_pipeline");
  }
  if (c.ep > 1 && (g.experts == 0 || g.experts % c.ep != 0)) {
    return invalid("expert_parallel", std::to_string(c.ep),
                   g.experts == 0 ? "1 for a dense model" : "a divisor of num_experts=" + std::to_string(g.experts));
  }
  if (r.num_microbatches) {
    if (!take_int(r.num_microbatches, "num_microbatches", 1, 1 << 24, &c.num_microbatches, &e)) return e;
  } else {
    c.num_microbatches = c.pp;  // the fewest that fill a 1F1B pipeline
    if (c.pp > 1) notes.push_back("num_microbatches=" + std::to_string(c.pp) + " (fills the pipeline)");
  }

  return true;
}

Result<bool> resolve_hardware(const Request& r, Config& c, Notes& notes) {
  if (r.gpu) {
    Result<const GpuSpec*> gpu = find_gpu(*r.gpu);
    if (!gpu) return gpu.error();
    c.gpu_name = (*gpu)->name;
    c.gpu_architecture = (*gpu)->architecture;
    c.capacity_bytes = (*gpu)->capacity_bytes;
  }
  if (r.gpu_memory_gb) {
    if (!(*r.gpu_memory_gb > 0 && *r.gpu_memory_gb <= 100000)) {
      return invalid("gpu_memory_gb", num(*r.gpu_memory_gb), "number > 0 and <= 100000 (GiB)");
    }
    c.capacity_bytes = *r.gpu_memory_gb * 1024.0 * 1024.0 * 1024.0;
    if (c.gpu_name.empty()) c.gpu_name = num(*r.gpu_memory_gb) + "-GiB GPU";
  }
  if (c.capacity_bytes == 0) {
    const GpuSpec* h100 = gpu_in_catalog("h100");
    if (h100 == nullptr) return make_error(ErrorCode::kInternal, "gpu", "GPU catalog is empty");
    c.gpu_name = h100->name;
    c.gpu_architecture = h100->architecture;
    c.capacity_bytes = h100->capacity_bytes;
    notes.push_back("gpu=h100 (79.6 GiB)");
  }
  if (r.offload_optimizer) c.offload_optimizer = *r.offload_optimizer;
  if (r.offload_params) c.offload_params = *r.offload_params;
  if (r.runtime_overhead) c.runtime_overhead = *r.runtime_overhead;
  Error e;
  if (!take_enum(r.fit_bound, "fit_bound", kFitBounds, &c.fit_bound, &e)) return e;
  Result<bool> allocator = resolve_allocator(r, c, notes);
  if (!allocator) return allocator;
  if (c.offload_params && c.zero_stage != 3) {
    return make_error(ErrorCode::kInconsistent, "offload_params",
                      "offload_params=true needs parameter sharding: zero_stage=3 or sharding=fsdp-full|fsdp-hybrid");
  }
  // FSDP's CPU offload keeps the sharded parameters on the CPU, so the optimizer built on
  // them keeps its states there and steps there (FSDP1 CPUOffload(offload_params=True);
  // FSDP2 CPUOffloadPolicy: "the optimizer step runs on CPU").
  if (c.offload_params && c.sharding != Sharding::kZero && !c.offload_optimizer) {
    if (r.offload_optimizer) {
      return make_error(ErrorCode::kInconsistent, "offload_optimizer",
                        "offload_optimizer=false contradicts FSDP's offload_params=true (its optimizer steps on the CPU)");
    }
    c.offload_optimizer = true;
    notes.push_back("offload_optimizer=true (FSDP CPU offload: the optimizer states and step live with the CPU parameters)");
  }

  return true;
}

}  // namespace

Result<bool> resolve_layout(const Request& r, Config* c, Notes* notes) {
  for (auto step : {resolve_parallelism, resolve_hardware}) {
    Result<bool> done = step(r, *c, *notes);
    if (!done) return done;
  }
  return check_layout(*c);
}

}  // namespace resolving

Result<bool> check_layout(const Config& c) {
  const auto inconsistent = [](const char* field, const std::string& message) {
    return make_error(ErrorCode::kInconsistent, field, message);
  };
  const int64_t mp = c.tp * c.pp * c.cp;
  if (c.num_gpus % mp != 0) {
    return inconsistent("num_gpus", "num_gpus=" + std::to_string(c.num_gpus) +
                                        " is not a multiple of tensor_parallel*pipeline_parallel*context_parallel=" +
                                        std::to_string(mp));
  }
  if (c.ep > 1 && (c.num_gpus / (c.tp * c.pp)) % c.ep != 0) {
    return inconsistent("num_gpus", "num_gpus=" + std::to_string(c.num_gpus) + " gives " +
                                        std::to_string(c.num_gpus / (c.tp * c.pp)) +
                                        " data-parallel ranks, not a multiple of expert_parallel=" + std::to_string(c.ep));
  }
  if (c.seq_length % c.cp != 0) {
    return inconsistent("seq_length", "seq_length=" + std::to_string(c.seq_length) +
                                          " is not a multiple of context_parallel=" + std::to_string(c.cp));
  }
  if (c.sp && (c.seq_length / c.cp) % c.tp != 0) {
    return inconsistent("seq_length", "seq_length=" + std::to_string(c.seq_length) +
                                          " per context-parallel rank is not a multiple of tensor_parallel=" +
                                          std::to_string(c.tp) + " (sequence parallelism splits the sequence)");
  }
  return true;
}

}  // namespace trainfit
