// The breakdown's figures and their JSON keys, once: the writer (json_response.cpp) and the
// reader (json_response_reader.cpp) both walk these tables, so a key cannot be spelled two
// ways. `unit` is what the figure is divided by in JSON: kGiB for *_gb keys, 1 for counts.
#pragma once

#include "trainfit/estimate.h"

namespace trainfit::response_keys {

template <typename Part>
struct Figure {
  const char* key;
  double Part::*member;
  double unit;
};

inline constexpr Figure<ModelStates> kModelStates[] = {
    {"weights_gb", &ModelStates::weights, kGiB},
    {"grads_gb", &ModelStates::grads, kGiB},
    {"master_weights_gb", &ModelStates::master, kGiB},
    {"optimizer_states_gb", &ModelStates::optimizer, kGiB},
};

inline constexpr Figure<Activations> kActivations[] = {
    {"per_layer_gb", &Activations::per_layer, kGiB},
    {"layers_in_flight", &Activations::inflight_layers, 1.0},
    {"layers_gb", &Activations::layers, kGiB},
    {"embedding_gb", &Activations::embedding, kGiB},
    {"logits_loss_gb", &Activations::logits_loss, kGiB},
    {"weight_cache_gb", &Activations::weight_cache, kGiB},
};

inline constexpr Figure<Transients> kTransients[] = {
    {"fsdp_units_forward_gb", &Transients::fsdp_units_fwd, kGiB},
    {"fsdp_units_backward_gb", &Transients::fsdp_units_bwd, kGiB},
    {"recompute_gb", &Transients::recompute, kGiB},
    {"layer_backward_gb", &Transients::layer_backward, kGiB},
    {"loss_forward_gb", &Transients::loss_forward, kGiB},
    {"loss_backward_gb", &Transients::loss_backward, kGiB},
    {"held_logits_gb", &Transients::held_logits, kGiB},
    {"comm_buckets_gb", &Transients::comm_buckets, kGiB},
    {"optimizer_step_gb", &Transients::optimizer_step, kGiB},
    {"context_parallel_gb", &Transients::context_parallel, kGiB},
    {"held_layer_inputs_gb", &Transients::held_layer_inputs, kGiB},
    {"autocast_cache_gb", &Transients::autocast_cache, kGiB},
};

inline constexpr Figure<StageMemory> kPhases[] = {
    {"forward_gb", &StageMemory::forward_peak, kGiB},
    {"backward_gb", &StageMemory::backward_peak, kGiB},
    {"optimizer_gb", &StageMemory::optimizer_peak, kGiB},
};

inline constexpr Figure<Overheads> kOverheads[] = {
    {"cuda_context_gb", &Overheads::cuda_context, kGiB},
    {"nccl_gb", &Overheads::nccl, kGiB},
    {"workspaces_gb", &Overheads::workspaces, kGiB},
    {"allocator_gb", &Overheads::allocator, kGiB},
};

inline constexpr Figure<Measures> kMeasures[] = {
    {"max_memory_allocated_gb", &Measures::max_memory_allocated, kGiB},
    {"max_memory_reserved_gb", &Measures::max_memory_reserved, kGiB},
    {"nvidia_smi_gb", &Measures::nvidia_smi, kGiB},
};

// The string members beside the figures.
inline constexpr const char* kPipelineStage = "pipeline_stage";
inline constexpr const char* kPeakPhase = "peak_phase";

}  // namespace trainfit::response_keys
