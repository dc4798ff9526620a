// The peak: model states resident, plus the maximum over the forward, backward
// and optimizer-step phases of what each phase adds, on the critical pipeline
// stage, plus runtime overheads (AgileRL PR #635: the peak is phase-wise).
#include <algorithm>

#include "model.h"

namespace trainfit {
namespace {

StageMemory stage_memory(const Config& c, const model::StageParams& p, const Activations* saved_activations,
                         double* host) {
  StageMemory s;
  s.params = p.dense + p.experts;
  s.states = model::gpu_states(c, p, host);
  s.activations = saved_activations != nullptr ? *saved_activations : model::stage_activations(c, p);
  s.transients = model::stage_transients(c, p);
  const Transients& x = s.transients;
  // Gradients that appear during backward (set_to_none) are not there in forward.
  const double late_grads = model::grads_persist(c) ? 0.0 : s.states.grads;
  const double saved = s.activations.total();
  const double layer_work = x.recompute + x.layer_backward;
  // PyTorch DDP's buckets and ZeRO-3's IPG bucket exist from their construction on: in every
  // phase, not only backward.
  const bool kept = (c.ddp_full_buckets && model::ddp_reduces(c)) || model::zero3_ipg_bucket(c);
  const double kept_buckets = kept ? x.comm_buckets : 0.0;
  const double resident = s.states.total() - late_grads + x.held_logits + kept_buckets;
  s.forward_peak = resident + saved + x.fsdp_units_fwd + x.loss_forward + x.context_parallel + x.autocast_cache;
  // Backward frees saved activations as it allocates gradients, layer by layer, so the
  // peak is at the loss backward (everything saved, no gradients yet), at the last
  // layer's backward (the loss' saved tensors freed, the head's gradients allocated),
  // or at the first layer's (every gradient, little saved).
  const double grad_per_param = late_grads / std::max(1.0, p.dense + p.experts);
  const double at_loss = saved + x.loss_backward;
  const double at_last_layer = saved - s.activations.logits_loss + grad_per_param * p.head + layer_work;
  // Layer inputs held by FSDP1's reshard hook (config.h held_layer_inputs): at the first
  // layer's backward every later layer's input and its gradient are still there.
  s.transients.held_layer_inputs =
      c.held_layer_inputs ? 2.0 * static_cast<double>(std::max<int64_t>(0, p.layers - 1)) * s.activations.per_layer : 0.0;
  const double at_first_layer = late_grads - grad_per_param * (p.embedding + p.per_layer) +
                                s.activations.embedding + layer_work + s.transients.held_layer_inputs;
  s.backward_peak = resident + x.fsdp_units_bwd + (x.comm_buckets - kept_buckets) + x.context_parallel +
                    std::max({at_loss, at_last_layer, at_first_layer});
  s.optimizer_peak = resident + late_grads + x.optimizer_step;  // activations are freed by then
  s.tensor_peak = std::max({s.forward_peak, s.backward_peak, s.optimizer_peak});
  s.peak_phase = s.tensor_peak == s.backward_peak ? "backward"
                 : s.tensor_peak == s.forward_peak ? "forward"
                                                   : "optimizer";
  return s;
}

}  // namespace

namespace model {

SharedParts shared_parts(const Config& c, bool with_activations) {
  SharedParts parts;
  parts.params = count_parameters(c.geo);
  if (c.geo.params_override > 0) parts.params.total = c.geo.params_override;
  if (c.adapter != Adapter::kNone) {  // a frozen base: the whole model's states on one device, one rank
    Config whole = c;
    whole.tp = whole.pp = whole.cp = whole.ep = 1;
    whole.num_gpus = 1;
    whole.zero_stage = 0;
    whole.sharding = Sharding::kZero;
    parts.adapter_states_unsharded = adapter_states(whole, stage_params(whole, true, true)).total();
  }
  parts.first = stage_params(c, true, c.pp == 1);
  if (c.pp > 1) parts.last = stage_params(c, false, true);
  parts.has_activations = with_activations;
  if (with_activations) {
    parts.first_activations = stage_activations(c, parts.first);
    if (c.pp > 1) parts.last_activations = stage_activations(c, parts.last);
  }
  return parts;
}

Breakdown estimate_with(const Config& c, const SharedParts& parts) {
  Breakdown b;
  b.params = parts.params;
  const model::StateBytes per_param = model::state_bytes(c);
  b.bytes_per_param = per_param.total();
  b.model_states_unsharded = b.bytes_per_param * b.params.total;
  if (c.adapter != Adapter::kNone) {
    b.model_states_unsharded = parts.adapter_states_unsharded;
    b.bytes_per_param = b.model_states_unsharded / std::max(1.0, b.params.total);
  }
  b.shard_group = model::dense_shard_group(c);
  b.capacity = c.capacity_bytes;

  double host = 0;
  double reported_peak = 0;  // the tensor peak of the stage `measures` describe
  const bool shared_activations = parts.has_activations;
  if (c.pp == 1) {
    b.stage = stage_memory(c, parts.first, shared_activations ? &parts.first_activations : nullptr, &host);
    b.critical_stage = "only";
    reported_peak = b.stage.tensor_peak;
  } else {
    double host_last = 0;
    const StageMemory first =
        stage_memory(c, parts.first, shared_activations ? &parts.first_activations : nullptr, &host);
    const StageMemory last =
        stage_memory(c, parts.last, shared_activations ? &parts.last_activations : nullptr, &host_last);
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
  b.overheads = model::overheads(c, b.stage.tensor_peak, b.stage.transients);
  b.per_gpu_total = b.stage.tensor_peak + b.overheads.total();
  const Overheads reported = reported_peak == b.stage.tensor_peak ? b.overheads : model::overheads(c, reported_peak, b.stage.transients);
  b.measures.max_memory_allocated = reported_peak + reported.workspaces;
  b.measures.max_memory_reserved = reported_peak + reported.workspaces + reported.allocator;
  b.measures.nvidia_smi = reported_peak + reported.total();
  b.range = &likely_range_for(c, b.shard_group);
  b.likely_low = b.per_gpu_total * b.range->low;
  b.likely_high = b.per_gpu_total * b.range->high;
  b.judged = c.fit_bound == FitBound::kLikelyHigh ? b.likely_high
             : c.fit_bound == FitBound::kLikelyLow ? b.likely_low
                                                   : b.per_gpu_total;
  b.fits = b.judged <= b.capacity;
  return b;
}

double states_floor(const Config& c) {
  double host = 0;
  return gpu_states(c, stage_params(c, true, c.pp == 1), &host).total();
}

}  // namespace model

Breakdown estimate(const Config& c) { return model::estimate_with(c, model::shared_parts(c, true)); }

}  // namespace trainfit
