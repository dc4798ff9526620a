// The peak: model states resident, plus the maximum over the forward, backward
// and optimizer-step phases of what each phase adds, on the critical pipeline
// stage, plus runtime overheads (notes section 5; AgileRL PR #635 phase-wise peak).
#include <algorithm>

#include "model.h"

namespace trainfit {
namespace {

StageMemory stage_memory(const Config& c, bool first, bool last, double* host) {
  const model::StageParams p = model::stage_params(c, first, last);
  StageMemory s;
  s.params = p.dense + p.experts;
  s.states = model::gpu_states(c, p, host);
  s.activations = model::stage_activations(c, p);
  s.transients = model::stage_transients(c, p);
  const Transients& x = s.transients;
  // Gradients that appear during backward (set_to_none) are not there in forward.
  const double late_grads = model::grads_persist(c) ? 0.0 : s.states.grads;
  const double saved = s.activations.total();
  const double layer_work = x.recompute + x.layer_backward;
  const double resident = s.states.total() - late_grads + x.held_logits;
  s.forward_peak = resident + saved + x.fsdp_units_fwd + x.loss_forward + x.context_parallel;
  // Backward frees saved activations as it allocates gradients, layer by layer, so the
  // peak is at the loss backward (everything saved, no gradients yet), at the last
  // layer's backward (the loss' saved tensors freed, the head's gradients allocated),
  // or at the first layer's (every gradient, little saved).
  const double grad_per_param = late_grads / std::max(1.0, p.dense + p.experts);
  const double at_loss = saved + x.loss_backward;
  const double at_last_layer = saved - s.activations.logits_loss + grad_per_param * p.head + layer_work;
  const double at_first_layer = late_grads - grad_per_param * (p.embedding + p.per_layer) +
                                s.activations.embedding + layer_work;
  s.backward_peak = resident + x.fsdp_units_bwd + x.comm_buckets + x.context_parallel +
                    std::max({at_loss, at_last_layer, at_first_layer});
  s.optimizer_peak = resident + late_grads + x.optimizer_step;  // activations are freed by then
  s.tensor_peak = std::max({s.forward_peak, s.backward_peak, s.optimizer_peak});
  s.peak_phase = s.tensor_peak == s.backward_peak ? "backward"
                 : s.tensor_peak == s.forward_peak ? "forward"
                                                   : "optimizer";
  return s;
}

}  // namespace

Breakdown estimate(const Config& c) {
  Breakdown b;
  b.params = count_parameters(c.geo);
  if (c.geo.params_override > 0) b.params.total = c.geo.params_override;
  const model::StateBytes per_param = model::state_bytes(c);
  b.bytes_per_param = per_param.total();
  b.model_states_unsharded = b.bytes_per_param * b.params.total;
  if (c.adapter != Adapter::kNone) {  // a frozen base: the whole model's states on one device, one rank
    Config whole = c;
    whole.tp = whole.pp = whole.cp = whole.ep = 1;
    whole.num_gpus = 1;
    whole.zero_stage = 0;
    whole.sharding = Sharding::kZero;
    b.model_states_unsharded = model::adapter_states(whole, model::stage_params(whole, true, true)).total();
    b.bytes_per_param = b.model_states_unsharded / std::max(1.0, b.params.total);
  }
  b.shard_group = model::dense_shard_group(c);
  b.capacity = c.capacity_bytes;

  double host = 0;
  double reported_peak = 0;  // the tensor peak of the stage `measures` describe
  if (c.pp == 1) {
    b.stage = stage_memory(c, true, true, &host);
    b.critical_stage = "only";
    reported_peak = b.stage.tensor_peak;
  } else {
    double host_last = 0;
    const StageMemory first = stage_memory(c, true, false, &host);
    const StageMemory last = stage_memory(c, false, true, &host_last);
    const bool last_wins = last.tensor_peak > first.tensor_peak;
    b.stage = last_wins ? last : first;
    b.critical_stage = last_wins ? "last" : "first";
    if (last_wins) host = host_last;
    reported_peak = c.report_stage == ReportStage::kFirst  ? first.tensor_peak
                    : c.report_stage == ReportStage::kLast ? last.tensor_peak
                                                           : b.stage.tensor_peak;
  }
  b.params_on_gpu = b.stage.params;
  b.host_offload_per_gpu = host;
  b.overheads = model::overheads(c, b.stage.tensor_peak);
  b.per_gpu_total = b.stage.tensor_peak + b.overheads.total();
  const Overheads reported = reported_peak == b.stage.tensor_peak ? b.overheads : model::overheads(c, reported_peak);
  b.measures.max_memory_allocated = reported_peak + reported.workspaces;
  b.measures.max_memory_reserved = reported_peak + reported.workspaces + reported.allocator;
  b.measures.nvidia_smi = reported_peak + reported.total();
  b.fits = b.per_gpu_total <= b.capacity;
  return b;
}

}  // namespace trainfit
