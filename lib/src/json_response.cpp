// Response -> JSON: exactly the seed's output fields, then trainfit's additions.
#include <cmath>
#include <nlohmann/json.hpp>

#include "trainfit/json.h"

namespace trainfit {
namespace {

using nlohmann::ordered_json;

// GiB rounded to 4 decimals: stable text, ~0.1 MB resolution.
double gib(double bytes) { return std::round(bytes / kGiB * 1e4) / 1e4; }
double round4(double value) { return std::round(value * 1e4) / 1e4; }

ordered_json breakdown_json(const Response& r) {
  const Breakdown& b = r.breakdown;
  const StageMemory& s = b.stage;
  const Config& c = r.resolved.config;
  ordered_json j;
  j["parameters"] = {{"total", std::llround(b.params.total)},
                     {"on_gpu_before_sharding", std::llround(b.params_on_gpu)},
                     {"embedding", std::llround(b.params.embedding)},
                     {"lm_head", std::llround(b.params.lm_head)},
                     {"per_layer", std::llround(b.params.per_layer + b.params.per_layer_experts)}};
  j["model_states"] = {{"weights_gb", gib(s.states.weights)},
                       {"grads_gb", gib(s.states.grads)},
                       {"master_weights_gb", gib(s.states.master)},
                       {"optimizer_states_gb", gib(s.states.optimizer)},
                       {"total_gb", gib(s.states.total())},
                       {"shard_group", b.shard_group}};
  j["activations"] = {{"per_layer_gb", gib(s.activations.per_layer)},
                      {"layers_in_flight", round4(s.activations.inflight_layers)},
                      {"layers_gb", gib(s.activations.layers)},
                      {"embedding_gb", gib(s.activations.embedding)},
                      {"logits_loss_gb", gib(s.activations.logits_loss)},
                      {"weight_cache_gb", gib(s.activations.weight_cache)},
                      {"total_gb", gib(s.activations.total())},
                      {"pipeline_stage", b.critical_stage}};
  j["transients"] = {{"fsdp_units_forward_gb", gib(s.transients.fsdp_units_fwd)},
                     {"fsdp_units_backward_gb", gib(s.transients.fsdp_units_bwd)},
                     {"recompute_gb", gib(s.transients.recompute)},
                     {"layer_backward_gb", gib(s.transients.layer_backward)},
                     {"loss_forward_gb", gib(s.transients.loss_forward)},
                     {"loss_backward_gb", gib(s.transients.loss_backward)},
                     {"held_logits_gb", gib(s.transients.held_logits)},
                     {"comm_buckets_gb", gib(s.transients.comm_buckets)},
                     {"optimizer_step_gb", gib(s.transients.optimizer_step)},
                     {"context_parallel_gb", gib(s.transients.context_parallel)}};
  j["phases"] = {{"forward_gb", gib(s.forward_peak)},
                 {"backward_gb", gib(s.backward_peak)},
                 {"optimizer_gb", gib(s.optimizer_peak)},
                 {"peak_phase", s.peak_phase}};
  j["overheads"] = {{"cuda_context_gb", gib(b.overheads.cuda_context)},
                    {"nccl_gb", gib(b.overheads.nccl)},
                    {"workspaces_gb", gib(b.overheads.workspaces)},
                    {"allocator_gb", gib(b.overheads.allocator)}};
  j["measures"] = {{"max_memory_allocated_gb", gib(b.measures.max_memory_allocated)},
                   {"max_memory_reserved_gb", gib(b.measures.max_memory_reserved)},
                   {"nvidia_smi_gb", gib(b.measures.nvidia_smi)},
                   {"stage", c.pp == 1 ? "only" : c.report_stage == ReportStage::kFirst ? "first"
                                                  : c.report_stage == ReportStage::kLast ? "last" : b.critical_stage},
                   {"fit_uses", "nvidia_smi_gb of the critical stage (per_gpu_total_gb)"}};
  // Exact bytes of the headline figures, for checks finer than the GiB rounding.
  j["bytes"] = {{"model_states", std::llround(s.states.total())},
                {"activations", std::llround(s.activations.total())},
                {"per_gpu_total", std::llround(b.per_gpu_total)},
                {"capacity", std::llround(b.capacity)}};
  j["host_offload"] = {{"per_gpu_gb", gib(b.host_offload_per_gpu)},
                       {"per_node_gb", gib(b.host_offload_per_gpu * static_cast<double>(
                                                 c.gpus_per_node > 0 ? std::min(c.gpus_per_node, c.num_gpus) : 1))}};
  return j;
}

ordered_json config_json(const Config& c) {
  return {{"model", c.model_name}, {"framework", to_string(c.framework)},
          {"num_layers", c.geo.layers}, {"hidden_dim", c.geo.hidden}, {"num_heads", c.geo.heads},
          {"num_kv_heads", c.geo.kv_heads}, {"ffn_hidden", c.geo.ffn}, {"vocab_size", c.geo.vocab},
          {"tied_embeddings", c.geo.tied}, {"mlp", to_string(c.geo.mlp)}, {"norm", to_string(c.geo.norm)},
          {"num_experts", c.geo.experts},
          {"precision", to_string(c.precision)}, {"optimizer", to_string(c.optimizer)}, {"optimizer_impl", to_string(c.optimizer_impl)},
          {"recompute", to_string(c.recompute)}, {"attention", to_string(c.attention)}, {"ops", to_string(c.ops)},
          {"loss", to_string(c.loss)}, {"logits_fp32", c.logits_fp32}, {"held_logits", c.held_logits},
          {"recompute_every", c.recompute_every}, {"compile", c.compile}, {"fp32_grads", c.fp32_grads},
          {"adapter", to_string(c.adapter)}, {"lora_rank", c.lora_rank},
          {"lora_targets", c.adapter == Adapter::kNone ? "" : to_string(c.lora_targets)},
          {"head_dim", c.geo.head_size()},
          {"tensor_parallel", c.tp}, {"pipeline_parallel", c.pp}, {"virtual_pipeline", c.vpp},
          {"sequence_parallel", c.sp}, {"context_parallel", c.cp}, {"expert_parallel", c.ep},
          {"data_parallel", c.data_parallel()}, {"num_microbatches", c.num_microbatches},
          {"sharding", to_string(c.sharding)}, {"gpu", c.gpu_name},
          {"offload_optimizer", c.offload_optimizer}, {"offload_params", c.offload_params},
          {"runtime_overhead", c.runtime_overhead}};
}

}  // namespace

std::string response_to_json(const Response& r, const ServingInfo& serving, int indent) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  const ModelStates& s = b.stage.states;
  ordered_json j;
  // --- the seed's fields, in its order ---
  j["model_states_unsharded_gb"] = gib(b.model_states_unsharded);
  j["model_states_per_gpu_gb"] = gib(s.total());
  j["activations_per_gpu_gb"] = gib(b.stage.activations.total());
  j["per_gpu_total_gb"] = gib(b.per_gpu_total);
  j["gpu_capacity_gb"] = gib(b.capacity);
  j["utilization_percent"] = std::round(1000.0 * b.per_gpu_total / b.capacity) / 10.0;
  j["fits"] = b.fits;
  j["bytes_per_param"] = round4(b.bytes_per_param);
  j["weights_per_gpu_gb"] = gib(s.weights);
  j["grads_per_gpu_gb"] = gib(s.grads);
  j["optimizer_per_gpu_gb"] = gib(s.master + s.optimizer);  // the seed's K: master + moments
  j["min_gpus_to_fit"] = r.min_gpus.gpus > 0 ? ordered_json(r.min_gpus.gpus) : ordered_json(nullptr);
  j["aggregate_cluster_gb"] = gib(b.capacity * static_cast<double>(c.num_gpus));
  j["global_batch"] = r.global_batch;
  j["zero_stage"] = c.zero_stage;
  j["checkpointing"] = c.recompute != Recompute::kNone;
  j["verdict"] = verdict(r);
  ordered_json profile;
  profile["mem_vs_gpus"] = ordered_json::array();
  for (const GpuPoint& p : r.mem_vs_gpus) {
    profile["mem_vs_gpus"].push_back({{"num_gpus", p.num_gpus}, {"per_gpu_gb", round4(p.per_gpu_gb)},
                                      {"model_state_gb", round4(p.model_state_gb)},
                                      {"activation_gb", round4(p.activation_gb)}, {"fits", p.fits}});
  }
  profile["mem_vs_seq"] = ordered_json::array();
  for (const SeqPoint& p : r.mem_vs_seq) {
    profile["mem_vs_seq"].push_back({{"seq_length", p.seq_length}, {"per_gpu_gb", round4(p.per_gpu_gb)},
                                     {"activation_gb", round4(p.activation_gb)}, {"fits", p.fits}});
  }
  profile["model_state_gb"] = gib(s.total());
  profile["activation_gb"] = gib(b.stage.activations.total());
  profile["capacity_gb"] = gib(b.capacity);
  profile["per_gpu_gb"] = gib(b.per_gpu_total);
  profile["num_gpus"] = c.num_gpus;
  profile["seq_length"] = c.seq_length;
  profile["fits"] = b.fits;
  j["profile"] = profile;
  j["serving_node"] = serving.serving_node;
  j["compute_ms"] = std::round(serving.compute_ms * 1e4) / 1e4;
  // --- trainfit's additions ---
  j["units"] = "GiB (2^30 bytes), as PyTorch and nvidia-smi count";
  if (r.min_gpus.gpus == 0) j["min_gpus_reason"] = r.min_gpus.reason;
  j["breakdown"] = breakdown_json(r);
  j["assumptions"] = r.resolved.assumptions;
  j["advice"] = ordered_json::array();
  for (const Advice& a : r.advice) {
    ordered_json changes = ordered_json::array();
    for (const Change& change : a.changes) changes.push_back({{"field", change.field}, {"value", change.value}});
    j["advice"].push_back({{"changes", changes}, {"num_gpus", a.num_gpus}, {"per_gpu_gb", round4(a.per_gpu_gb)},
                           {"fits", a.fits}});
  }
  j["config"] = config_json(c);
  return j.dump(indent);
}

std::string error_to_json(const Error& error) {
  ordered_json j;
  j["error"] = {{"code", error_code_name(error.code)}, {"field", error.field}, {"message", error.message}};
  return j.dump();
}

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidValue: return "invalid_value";
    case ErrorCode::kUnknownField: return "unknown_field";
    case ErrorCode::kUnknownName: return "unknown_name";
    case ErrorCode::kMalformed: return "malformed";
    case ErrorCode::kInconsistent: return "inconsistent";
    case ErrorCode::kMissing: return "missing";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace trainfit
