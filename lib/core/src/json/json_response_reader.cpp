// JSON -> Response: reads a service's answer back into the type the CLI renders, so that
// `trainfit estimate --endpoint` prints what a local run prints. The JSON's GiB figures
// are rounded to 4 decimals; the renderers print those rounded figures (render.cpp), so a
// table read back here and a local table agree digit for digit.
#include <nlohmann/json.hpp>

#include "response_keys.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using nlohmann::json;

// A missing member or a wrong type throws json::exception: one answer for every bad shape.
double gb(const json& object, const char* key) { return object.at(key).get<double>() * kGiB; }
int64_t integer(const json& object, const char* key) { return object.at(key).get<int64_t>(); }
bool flag(const json& object, const char* key) { return object.at(key).get<bool>(); }
std::string text(const json& object, const char* key) { return object.at(key).get<std::string>(); }

// The enum whose to_string is `name`; enums run from 0 without gaps.
template <typename Enum>
Enum enum_named(const std::string& name) {
  for (int i = 0; i < 16; ++i) {
    if (name == to_string(static_cast<Enum>(i))) return static_cast<Enum>(i);
  }
  throw std::invalid_argument("unknown name '" + name + "'");
}

// Breakdown's stage and phase names are static strings.
const char* static_name(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* known : names) if (name == known) return known;
  throw std::invalid_argument("unknown name '" + name + "'");
}

void read_parameters(const json& p, Breakdown& b) {
  b.params.total = static_cast<double>(integer(p, "total"));
  b.params_on_gpu = static_cast<double>(integer(p, "on_gpu_before_sharding"));
  b.params.embedding = static_cast<double>(integer(p, "embedding"));
  b.params.lm_head = static_cast<double>(integer(p, "lm_head"));
  b.params.per_layer = static_cast<double>(integer(p, "per_layer"));
}

template <typename Part, size_t N>
void read_figures(const json& object, Part& part, const response_keys::Figure<Part> (&table)[N]) {
  for (const auto& figure : table) part.*figure.member = object.at(figure.key).template get<double>() * figure.unit;
}

void read_states_activations(const json& j, Breakdown& b) {
  const json& s = j.at("model_states");
  read_figures(s, b.stage.states, response_keys::kModelStates);
  b.shard_group = integer(s, "shard_group");
  const json& a = j.at("activations");
  read_figures(a, b.stage.activations, response_keys::kActivations);
  b.critical_stage = static_name(text(a, response_keys::kPipelineStage), {"only", "first", "last"});
}

void read_phases_overheads_measures(const json& j, Breakdown& b) {
  const json& p = j.at("phases");
  read_figures(p, b.stage, response_keys::kPhases);
  b.stage.peak_phase = static_name(text(p, response_keys::kPeakPhase), {"forward", "backward", "optimizer"});
  read_figures(j.at("overheads"), b.overheads, response_keys::kOverheads);
  read_figures(j.at("measures"), b.measures, response_keys::kMeasures);
}

void read_breakdown(const json& j, Response& r) {
  const json& bd = j.at("breakdown");
  Breakdown& b = r.breakdown;
  read_parameters(bd.at("parameters"), b);
  read_states_activations(bd, b);
  read_figures(bd.at("transients"), b.stage.transients, response_keys::kTransients);
  read_phases_overheads_measures(bd, b);
  const json& bytes = bd.at("bytes");  // exact: the verdict's figures
  b.per_gpu_total = static_cast<double>(integer(bytes, "per_gpu_total"));
  b.capacity = static_cast<double>(integer(bytes, "capacity"));
  b.host_offload_per_gpu = gb(bd.at("host_offload"), "per_gpu_gb");
  b.model_states_unsharded = gb(j, "model_states_unsharded_gb");
  b.bytes_per_param = j.at("bytes_per_param").get<double>();
  b.fits = flag(j, "fits");
}

void read_config_model(const json& c, Config& out) {
  out.model_name = text(c, "model");
  out.model_label = c.value("model_label", std::string());
  out.framework = enum_named<Framework>(text(c, "framework"));
  out.framework_version = c.value("framework_version", std::string());
  out.geo.layers = integer(c, "num_layers");
  out.geo.hidden = integer(c, "hidden_dim");
  out.geo.heads = integer(c, "num_heads");
  out.geo.kv_heads = integer(c, "num_kv_heads");
  out.geo.ffn = integer(c, "ffn_hidden");
  out.geo.vocab = integer(c, "vocab_size");
  out.geo.tied = flag(c, "tied_embeddings");
  out.geo.mlp = enum_named<Mlp>(text(c, "mlp"));
  out.geo.norm = enum_named<Norm>(text(c, "norm"));
  out.geo.experts = integer(c, "num_experts");
  out.geo.head_dim = integer(c, "head_dim");
}

void read_config_training(const json& c, Config& out) {
  out.precision = enum_named<Precision>(text(c, "precision"));
  out.precision_label = c.value("precision_label", std::string());
  if (out.precision_label == to_string(out.precision)) out.precision_label.clear();
  out.optimizer = enum_named<Optimizer>(text(c, "optimizer"));
  out.optimizer_impl = enum_named<OptimizerImpl>(text(c, "optimizer_impl"));
  out.recompute = enum_named<Recompute>(text(c, "recompute"));
  out.attention = enum_named<Attention>(text(c, "attention"));
  out.ops = enum_named<Ops>(text(c, "ops"));
  out.loss = enum_named<Loss>(text(c, "loss"));
  out.logits_fp32 = flag(c, "logits_fp32");
  out.held_logits = flag(c, "held_logits");
  out.autocast_cache = c.value("autocast_cache", true);
  out.use_reentrant = c.value("use_reentrant", true);
  out.recompute_every = integer(c, "recompute_every");
  out.compile = flag(c, "compile");
  out.compile_loss = c.value("compile_loss", out.compile);
  out.fp32_grads = flag(c, "fp32_grads");
  out.adapter = enum_named<Adapter>(text(c, "adapter"));
  out.lora_rank = integer(c, "lora_rank");
  if (out.adapter != Adapter::kNone) {
    Result<uint32_t> modules = parse_lora_modules(text(c, "lora_targets"), "lora_targets");
    if (modules) out.lora_modules = *modules;
  }
  // Fields added after the first responses: read when present.
  out.base_dtype = enum_named<BaseDtype>(c.value("base_dtype", std::string("follow")));
  out.adapter_bytes = c.value("lora_dtype", std::string("fp32")) == "fp32" ? 4.0 : 2.0;
  out.dora = c.value("dora", false);
  const std::string saved = c.value("modules_to_save", std::string());
  if (!saved.empty()) {
    Result<uint32_t> modules = parse_lora_modules(saved, "modules_to_save");
    if (modules) out.modules_to_save = *modules;
  }
  out.adapter_autocast = c.value("adapter_autocast", false);
  out.kbit_fp32_rest = c.value("kbit_fp32_rest", false);
  out.bitsandbytes_version = c.value("bitsandbytes_version", std::string());
  out.nf4_saves_input = c.value("nf4_saves_input", false);
  out.logits_upcast = c.value("logits_upcast", std::string("loss")) == "forward" ? LogitsUpcast::kInForward : LogitsUpcast::kInLoss;
  out.logits_shift_copy = c.value("logits_shift_copy", true);
  out.moe_expert_loop = c.value("moe_expert_loop", false);
  out.ddp_full_buckets = c.value("ddp_full_buckets", false);
}

void read_config_layout(const json& c, Config& out) {
  out.fsdp_version = static_cast<int>(c.value("fsdp_version", int64_t{2}));
  out.fsdp_mixed_precision = c.value("fsdp_mixed_precision", true);
  out.frozen_unit_grads = enum_named<FrozenUnitGrads>(c.value("frozen_unit_grads", std::string("none")));
  out.held_layer_inputs = c.value("held_layer_inputs", false);
  out.reduce_bucket_elements = c.value("reduce_bucket_size", 5e8);
  out.zero3.prefetch_bucket = c.value("stage3_prefetch_bucket_size", 5e7);
  out.zero3.max_live = c.value("stage3_max_live_parameters", 1e9);
  out.zero3.max_reuse_distance = c.value("stage3_max_reuse_distance", 1e9);
  out.zero3.persistence_threshold = c.value("stage3_param_persistence_threshold", 1e5);
  out.tp = integer(c, "tensor_parallel");
  out.pp = integer(c, "pipeline_parallel");
  out.vpp = integer(c, "virtual_pipeline");
  out.sp = flag(c, "sequence_parallel");
  out.cp = integer(c, "context_parallel");
  out.ep = integer(c, "expert_parallel");
  out.num_microbatches = integer(c, "num_microbatches");
  out.sharding = enum_named<Sharding>(text(c, "sharding"));
  out.gpu_name = text(c, "gpu");
  out.offload_optimizer = flag(c, "offload_optimizer");
  out.offload_params = flag(c, "offload_params");
  out.runtime_overhead = flag(c, "runtime_overhead");
  out.rising_lengths = c.value("rising_lengths", int64_t{1});
  const std::string lengths = c.value("batch_lengths", std::string("fixed"));
  out.batch_lengths = lengths == "rising" ? BatchLengths::kRising : lengths == "random" ? BatchLengths::kRandom : BatchLengths::kFixed;
  out.expandable_segments = c.value("expandable_segments", false);
  out.gpus_per_node = c.value("gpus_per_node", int64_t{0});
  out.gpus_per_node_assumed = c.value("gpus_per_node_assumed", false);
  out.max_gpus = c.value("max_gpus", int64_t{16384});
}

// The config, with what the JSON states elsewhere: the step's shape is in `profile`,
// the micro-batch follows from the global batch.
void read_config(const json& j, Response& r) {
  Config& c = r.resolved.config;
  read_config_model(j.at("config"), c);
  read_config_training(j.at("config"), c);
  read_config_layout(j.at("config"), c);
  c.num_gpus = integer(j.at("profile"), "num_gpus");
  c.seq_length = integer(j.at("profile"), "seq_length");
  c.zero_stage = static_cast<int>(integer(j, "zero_stage"));
  c.capacity_bytes = r.breakdown.capacity;
  const int64_t per_micro_batch = c.num_microbatches * integer(j.at("config"), "data_parallel");
  c.micro_batch = per_micro_batch > 0 ? r.global_batch / per_micro_batch : 0;
  r.resolved.assumptions = j.at("assumptions").get<std::vector<std::string>>();
}

// A point's likely range; a service older than the profiles' ranges gives none, and the point
// figure stands for both ends (an empty range, which the charts leave undrawn).
template <typename Point>
void read_point_range(const json& point, Point& p) {
  p.likely_low_gb = point.contains("likely_low_gb") ? point.at("likely_low_gb").get<double>() : p.per_gpu_gb;
  p.likely_high_gb = point.contains("likely_high_gb") ? point.at("likely_high_gb").get<double>() : p.per_gpu_gb;
}

void read_profiles(const json& p, Response& r) {
  for (const json& point : p.at("mem_vs_gpus")) {
    GpuPoint g{integer(point, "num_gpus"), point.at("per_gpu_gb").get<double>(), point.at("model_state_gb").get<double>(),
               point.at("activation_gb").get<double>(), flag(point, "fits")};
    read_point_range(point, g);
    r.mem_vs_gpus.push_back(g);
  }
  for (const json& point : p.at("mem_vs_seq")) {
    SeqPoint s{integer(point, "seq_length"), point.at("per_gpu_gb").get<double>(), point.at("activation_gb").get<double>(),
               flag(point, "fits")};
    read_point_range(point, s);
    r.mem_vs_seq.push_back(s);
  }
}

void read_advice(const json& list, Response& r) {
  for (const json& item : list) {
    Advice a;
    for (const json& change : item.at("changes")) a.changes.push_back({text(change, "field"), text(change, "value")});
    if (a.changes.empty()) throw std::invalid_argument("advice without changes");
    a.num_gpus = integer(item, "num_gpus");
    a.per_gpu_gb = item.at("per_gpu_gb").get<double>();
    a.fits = flag(item, "fits");
    r.advice.push_back(std::move(a));
  }
}

Response read_response(const json& j) {
  Response r;
  read_breakdown(j, r);
  r.global_batch = integer(j, "global_batch");
  read_config(j, r);
  // The range as the answering build stated it; a service older than the range gets this build's.
  Breakdown& b = r.breakdown;
  b.range = &likely_range_for(r.resolved.config, b.shard_group);
  b.likely_low = j.contains("likely_low_gb") ? gb(j, "likely_low_gb") : b.per_gpu_total * b.range->low;
  b.likely_high = j.contains("likely_high_gb") ? gb(j, "likely_high_gb") : b.per_gpu_total * b.range->high;
  // The figure its fits and min_gpus_to_fit were judged on; an older service's: the point.
  r.resolved.config.fit_bound = enum_named<FitBound>(j.contains("fit_bound") ? text(j, "fit_bound") : "point");
  const FitBound bound = r.resolved.config.fit_bound;
  b.judged = bound == FitBound::kLikelyHigh ? b.likely_high : bound == FitBound::kLikelyLow ? b.likely_low : b.per_gpu_total;
  read_profiles(j.at("profile"), r);
  read_advice(j.at("advice"), r);
  if (!j.at("min_gpus_to_fit").is_null()) r.min_gpus.gpus = integer(j, "min_gpus_to_fit");
  if (r.min_gpus.gpus == 0) r.min_gpus.reason = text(j, "min_gpus_reason");
  return r;
}

Error malformed(const std::string& what) {
  return make_error(ErrorCode::kMalformed, "", "the answer is not a trainfit response: " + what);
}

}  // namespace

Result<Response> response_from_json(const std::string& body, ServingInfo* serving) {
  try {
    const json j = json::parse(body);
    Response r = read_response(j);
    if (serving != nullptr) *serving = {text(j, "serving_node"), j.at("compute_ms").get<double>()};
    return r;
  } catch (const std::exception& e) {
    return malformed(e.what());
  }
}

std::optional<Error> error_from_json(const std::string& body) {
  try {
    const json doc = json::parse(body);
    const json& e = doc.at("error");
    const std::string code = text(e, "code");
    Error error = make_error(ErrorCode::kInternal, text(e, "field"), text(e, "message"));
    for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
      if (code == error_code_name(static_cast<ErrorCode>(i))) error.code = static_cast<ErrorCode>(i);
    }
    return error;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace trainfit
