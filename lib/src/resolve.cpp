// Request -> Config: presets, documented defaults, validation.
// Every rejected value gets one line naming the field, the value and what is accepted.
#include <cmath>
#include <string>

#include "text.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"

namespace trainfit {
namespace {

// Sane upper bounds: beyond them a request is a typo, not a training job.
constexpr int64_t kMaxGpus = int64_t{1} << 20;
constexpr int64_t kMaxSeq = int64_t{1} << 24;
constexpr int64_t kMaxDim = int64_t{1} << 20;

Error invalid(const std::string& field, const std::string& value, const std::string& accepted) {
  return make_error(ErrorCode::kInvalidValue, field,
                    field + "=" + value + " is not valid; accepted: " + accepted);
}

std::string num(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// Checks an optional integer against [lo, hi]; copies it into *out when set.
bool take_int(const std::optional<int64_t>& value, const char* field, int64_t lo, int64_t hi,
              int64_t* out, Error* error) {
  if (!value) return true;
  if (*value < lo || *value > hi) {
    *error = invalid(field, std::to_string(*value),
                     "integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return false;
  }
  *out = *value;
  return true;
}

template <typename Enum>
struct Choice {
  const char* name;
  Enum value;
};

template <typename Enum, size_t N>
bool take_enum(const std::optional<std::string>& value, const char* field, const Choice<Enum> (&choices)[N],
               Enum* out, Error* error) {
  if (!value) return true;
  const std::string wanted = lower(*value);
  std::string accepted;
  std::vector<std::string> names;
  for (const auto& choice : choices) {
    if (wanted == choice.name) {
      *out = choice.value;
      return true;
    }
    accepted += accepted.empty() ? "" : "|";
    accepted += choice.name;
    names.push_back(choice.name);
  }
  const std::string hint = did_you_mean(wanted, names);
  *error = invalid(field, "'" + *value + "'", accepted + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  return false;
}

constexpr Choice<Mlp> kMlps[] = {{"swiglu", Mlp::kSwiGlu}, {"gelu", Mlp::kGelu}};
constexpr Choice<Norm> kNorms[] = {{"rmsnorm", Norm::kRmsNorm}, {"layernorm", Norm::kLayerNorm}};
constexpr Choice<Bias> kBiases[] = {{"none", Bias::kNone}, {"qkv", Bias::kQkv}, {"all", Bias::kAll}};
constexpr Choice<Precision> kPrecisions[] = {{"fp32", Precision::kFp32},
                                             {"bf16", Precision::kBf16},
                                             {"bf16-amp", Precision::kBf16Amp},
                                             {"fp16-amp", Precision::kFp16Amp},
                                             {"fp8", Precision::kFp8}};
constexpr Choice<Optimizer> kOptimizers[] = {{"adamw", Optimizer::kAdamW},
                                             {"adamw-8bit", Optimizer::kAdamW8bit},
                                             {"sgd", Optimizer::kSgd},
                                             {"adafactor", Optimizer::kAdafactor},
                                             {"lion", Optimizer::kLion}};
constexpr Choice<OptimizerImpl> kOptimizerImpls[] = {
    {"foreach", OptimizerImpl::kForeach}, {"fused", OptimizerImpl::kFused}, {"loop", OptimizerImpl::kLoop}};
constexpr Choice<Recompute> kRecomputes[] = {
    {"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull}};
constexpr Choice<Attention> kAttentions[] = {{"eager", Attention::kEager}, {"flash", Attention::kFlash}};
constexpr Choice<Ops> kOps[] = {{"eager", Ops::kEager}, {"fused", Ops::kFused}};
constexpr Choice<Loss> kLosses[] = {{"standard", Loss::kStandard}, {"chunked", Loss::kChunked}, {"fused", Loss::kFused}};
constexpr Choice<Sharding> kShardings[] = {{"zero", Sharding::kZero},
                                           {"fsdp-full", Sharding::kFsdpFull},
                                           {"fsdp-grad-op", Sharding::kFsdpGradOp},
                                           {"fsdp-hybrid", Sharding::kFsdpHybrid}};

// Default FFN size for a custom geometry: solved from the parameter count when
// given (per layer: attention 2h^2(1 + g/a), MLP 3hF or 2hF, two norms; embeddings
// apart), else Llama's 8h/3 rule rounded up to 256 (torchtitan llama3 ModelArgs:
// int(2*4*dim/3), multiple_of).
int64_t default_ffn(const Geometry& g, double total_params) {
  const double h = static_cast<double>(g.hidden);
  const double attn = h * h * (2.0 + 2.0 * static_cast<double>(g.kv_heads) / static_cast<double>(g.heads));
  const double embed = static_cast<double>(g.vocab) * h * (g.tied ? 1.0 : 2.0);
  const double mats = g.mlp == Mlp::kSwiGlu ? 3.0 : 2.0;
  if (total_params > 0) {
    const double per_layer = (total_params - embed) / static_cast<double>(g.layers);
    const double ffn = (per_layer - attn - 2.0 * h) / (mats * h);
    if (ffn >= h / 2) return static_cast<int64_t>(std::ceil(ffn / 256.0) * 256.0);
  }
  const double rule = g.mlp == Mlp::kSwiGlu ? 8.0 * h / 3.0 : 4.0 * h;
  return static_cast<int64_t>(std::ceil(rule / 256.0) * 256.0);
}

}  // namespace

Result<Resolved> resolve(const Request& r) {
  Resolved out;
  Config& c = out.config;
  Geometry& g = c.geo;
  auto& notes = out.assumptions;
  Error e;

  // --- geometry: preset, then explicit fields ---
  if (r.model) {
    Result<const ModelPreset*> preset = find_model(*r.model);
    if (!preset) return preset.error();
    g = (*preset)->geometry;
    c.model_name = (*preset)->name;
  }
  if (!take_int(r.num_layers, "num_layers", 1, 100000, &g.layers, &e) ||
      !take_int(r.hidden_dim, "hidden_dim", 1, kMaxDim, &g.hidden, &e) ||
      !take_int(r.num_heads, "num_heads", 1, kMaxDim, &g.heads, &e) ||
      !take_int(r.num_kv_heads, "num_kv_heads", 1, kMaxDim, &g.kv_heads, &e) ||
      !take_int(r.ffn_hidden, "ffn_hidden", 1, int64_t{1} << 24, &g.ffn, &e) ||
      !take_int(r.vocab_size, "vocab_size", 1, int64_t{1} << 24, &g.vocab, &e) ||
      !take_int(r.learned_positions, "learned_positions", 0, kMaxSeq, &g.learned_positions, &e) ||
      !take_int(r.num_experts, "num_experts", 0, 65536, &g.experts, &e) ||
      !take_int(r.experts_per_token, "experts_per_token", 1, 65536, &g.top_k, &e) ||
      !take_int(r.moe_ffn_hidden, "moe_ffn_hidden", 1, int64_t{1} << 24, &g.moe_ffn, &e) ||
      !take_int(r.head_dim, "head_dim", 1, kMaxDim, &g.head_dim, &e) ||
      !take_enum(r.mlp, "mlp", kMlps, &g.mlp, &e) || !take_enum(r.norm, "norm", kNorms, &g.norm, &e) ||
      !take_enum(r.bias, "bias", kBiases, &g.bias, &e)) {
    return e;
  }
  if (r.tied_embeddings) g.tied = *r.tied_embeddings;
  if (r.dropout) g.dropout = *r.dropout;
  if (r.qk_norm) g.qk_norm = *r.qk_norm;
  if (r.sandwich_norm) g.sandwich_norm = *r.sandwich_norm;
  if (r.model_params_b) {
    if (!(*r.model_params_b > 0 && *r.model_params_b <= 100000)) {
      return invalid("model_params_b", num(*r.model_params_b), "number > 0 and <= 100000 (billions)");
    }
    g.params_override = *r.model_params_b * 1e9;
  }

  // A custom geometry needs at least the seed's reduced description.
  if (!r.model) {
    if (g.layers == 0 || g.hidden == 0) {
      return make_error(ErrorCode::kMissing, g.layers == 0 ? "num_layers" : "hidden_dim",
                        "no model geometry: give model (a catalog name), an HF config, or num_layers and "
                        "hidden_dim (with model_params_b)");
    }
    if (g.heads == 0) {
      g.heads = g.hidden % 128 == 0 ? g.hidden / 128 : g.hidden % 64 == 0 ? g.hidden / 64 : 1;
      notes.push_back("num_heads=" + std::to_string(g.heads) + " (head dim 128, else 64)");
    }
    if (g.kv_heads == 0) {
      g.kv_heads = g.heads;
      notes.push_back("num_kv_heads=num_heads (multi-head attention)");
    }
    if (g.vocab == 0) {
      g.vocab = 32000;
      notes.push_back("vocab_size=32000 (Llama-2 tokenizer)");
    }
    if (!r.tied_embeddings) notes.push_back("untied embeddings");
    if (!r.mlp) notes.push_back(std::string("mlp=") + to_string(g.mlp));
    if (!r.norm) notes.push_back(std::string("norm=") + to_string(g.norm));
    if (g.ffn == 0) {
      g.ffn = default_ffn(g, g.params_override);
      notes.push_back("ffn_hidden=" + std::to_string(g.ffn) +
                      (g.params_override > 0 ? " (solved from model_params_b)" : " (8h/3 SwiGLU rule)"));
    }
  }
  if (g.head_dim == 0 && g.hidden % g.heads != 0) {
    return invalid("num_heads", std::to_string(g.heads),
                   "a divisor of hidden_dim=" + std::to_string(g.hidden) + " (or give head_dim)");
  }
  if (g.heads % g.kv_heads != 0) {
    return invalid("num_kv_heads", std::to_string(g.kv_heads), "a divisor of num_heads=" + std::to_string(g.heads));
  }
  if (g.experts > 0) {
    if (g.top_k == 0) g.top_k = 2;
    if (g.moe_ffn == 0) g.moe_ffn = g.ffn;
    if (g.top_k > g.experts) {
      return invalid("experts_per_token", std::to_string(g.top_k),
                     "an integer from 1 to num_experts=" + std::to_string(g.experts));
    }
  }

  // --- step shape ---
  if (!take_int(r.num_gpus, "num_gpus", 1, kMaxGpus, &c.num_gpus, &e) ||
      !take_int(r.micro_batch, "micro_batch", 1, 1 << 20, &c.micro_batch, &e) ||
      !take_int(r.seq_length, "seq_length", 1, kMaxSeq, &c.seq_length, &e)) {
    return e;
  }
  if (static_cast<double>(c.micro_batch) * static_cast<double>(c.seq_length) > static_cast<double>(int64_t{1} << 30)) {
    return invalid("micro_batch", std::to_string(c.micro_batch),
                   "micro_batch*seq_length at most 2^30 tokens per micro-batch (seq_length=" +
                       std::to_string(c.seq_length) + ")");
  }
  if (!r.num_gpus) notes.push_back("num_gpus=1");
  if (!r.micro_batch) notes.push_back("micro_batch=1");
  if (!r.seq_length) notes.push_back("seq_length=4096");

  // --- numerics ---
  if (r.precision_bits) {
    const int64_t bits = *r.precision_bits;
    if (bits != 8 && bits != 16 && bits != 32) return invalid("precision_bits", std::to_string(bits), "8|16|32");
    // The seed's 16 is the ZeRO paper's mixed precision: 16-bit weights and grads, fp32 master + Adam.
    c.precision = bits == 32 ? Precision::kFp32 : bits == 8 ? Precision::kFp8 : Precision::kFp16Amp;
  }
  if (r.precision) {
    Precision named = c.precision;
    if (!take_enum(r.precision, "precision", kPrecisions, &named, &e)) return e;
    if (r.precision_bits && (named == Precision::kFp32) != (*r.precision_bits == 32)) {
      return make_error(ErrorCode::kInconsistent, "precision",
                        "precision='" + *r.precision + "' contradicts precision_bits=" +
                            std::to_string(*r.precision_bits) + "; give one of them");
    }
    c.precision = named;
  }
  if (!r.precision && !r.precision_bits) notes.push_back("precision=bf16-amp (fp32 params, bf16 autocast)");
  if (!take_enum(r.optimizer, "optimizer", kOptimizers, &c.optimizer, &e) ||
      !take_enum(r.optimizer_impl, "optimizer_impl", kOptimizerImpls, &c.optimizer_impl, &e)) {
    return e;
  }
  if (r.fp32_grads) c.fp32_grads = *r.fp32_grads;

  // --- activations ---
  if (r.grad_ckpt) {
    if (*r.grad_ckpt != 0 && *r.grad_ckpt != 1) return invalid("grad_ckpt", std::to_string(*r.grad_ckpt), "0|1");
    c.recompute = *r.grad_ckpt == 1 ? Recompute::kFull : Recompute::kNone;
  }
  if (r.recompute) {
    Recompute named = c.recompute;
    if (!take_enum(r.recompute, "recompute", kRecomputes, &named, &e)) return e;
    if (r.grad_ckpt && (*r.grad_ckpt == 1) != (named == Recompute::kFull)) {
      return make_error(ErrorCode::kInconsistent, "recompute",
                        "recompute='" + *r.recompute + "' contradicts grad_ckpt=" + std::to_string(*r.grad_ckpt) +
                            " (grad_ckpt 1 means full); give one of them");
    }
    c.recompute = named;
  }
  if (!take_enum(r.attention, "attention", kAttentions, &c.attention, &e) ||
      !take_enum(r.loss, "loss", kLosses, &c.loss, &e) || !take_enum(r.ops, "ops", kOps, &c.ops, &e)) {
    return e;
  }
  if (!r.attention) notes.push_back("attention=flash");
  if (r.logits_fp32) c.logits_fp32 = *r.logits_fp32;

  // --- parallelism ---
  if (!take_int(r.tensor_parallel, "tensor_parallel", 1, 4096, &c.tp, &e) ||
      !take_int(r.pipeline_parallel, "pipeline_parallel", 1, 100000, &c.pp, &e) ||
      !take_int(r.virtual_pipeline, "virtual_pipeline", 1, 100000, &c.vpp, &e) ||
      !take_int(r.context_parallel, "context_parallel", 1, kMaxSeq, &c.cp, &e) ||
      !take_int(r.expert_parallel, "expert_parallel", 1, 65536, &c.ep, &e) ||
      !take_int(r.gpus_per_node, "gpus_per_node", 1, 4096, &c.gpus_per_node, &e) ||
      !take_enum(r.sharding, "sharding", kShardings, &c.sharding, &e)) {
    return e;
  }
  if (r.sequence_parallel) c.sp = *r.sequence_parallel;
  if (r.zero_stage) {
    if (*r.zero_stage < 0 || *r.zero_stage > 3) return invalid("zero_stage", std::to_string(*r.zero_stage), "0|1|2|3");
    c.zero_stage = static_cast<int>(*r.zero_stage);
  }
  if (c.sharding != Sharding::kZero) {
    const int implied = c.sharding == Sharding::kFsdpGradOp ? 2 : 3;
    if (r.zero_stage && c.zero_stage != implied) {
      return make_error(ErrorCode::kInconsistent, "zero_stage",
                        "zero_stage=" + std::to_string(c.zero_stage) + " contradicts sharding='" + *r.sharding +
                            "' (which shards like ZeRO-" + std::to_string(implied) + "); give one of them");
    }
    c.zero_stage = implied;
  }
  if (c.sharding == Sharding::kFsdpHybrid && c.gpus_per_node == 0) {
    notes.push_back("fsdp-hybrid shards within 8-GPU nodes (gpus_per_node not given)");
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

  // --- hardware ---
  if (r.gpu) {
    Result<const GpuSpec*> gpu = find_gpu(*r.gpu);
    if (!gpu) return gpu.error();
    c.gpu_name = (*gpu)->name;
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
    const GpuSpec* h100 = find_gpu("h100").ok() ? *find_gpu("h100") : nullptr;
    if (h100 == nullptr) return make_error(ErrorCode::kInternal, "gpu", "GPU catalog is empty");
    c.gpu_name = h100->name;
    c.capacity_bytes = h100->capacity_bytes;
    notes.push_back("gpu=h100 (79.6 GiB)");
  }
  if (r.offload_optimizer) c.offload_optimizer = *r.offload_optimizer;
  if (r.offload_params) c.offload_params = *r.offload_params;
  if (r.runtime_overhead) c.runtime_overhead = *r.runtime_overhead;
  if (c.offload_params && c.zero_stage != 3) {
    return make_error(ErrorCode::kInconsistent, "offload_params",
                      "offload_params=true needs parameter sharding: zero_stage=3 or sharding=fsdp-full|fsdp-hybrid");
  }

  const std::string problem = layout_problem(c);
  if (!problem.empty()) {
    const bool seq = problem.rfind("seq_length", 0) == 0;
    return make_error(ErrorCode::kInconsistent, seq ? "seq_length" : "num_gpus", problem);
  }
  return out;
}

std::string layout_problem(const Config& c) {
  const int64_t mp = c.tp * c.pp * c.cp;
  if (c.num_gpus % mp != 0) {
    return "num_gpus=" + std::to_string(c.num_gpus) + " is not a multiple of tensor_parallel*pipeline_parallel*context_parallel=" +
           std::to_string(mp);
  }
  if (c.ep > 1 && (c.num_gpus / (c.tp * c.pp)) % c.ep != 0) {
    return "num_gpus=" + std::to_string(c.num_gpus) + " gives " + std::to_string(c.num_gpus / (c.tp * c.pp)) +
           " data-parallel ranks, not a multiple of expert_parallel=" + std::to_string(c.ep);
  }
  if (c.seq_length % c.cp != 0) {
    return "seq_length=" + std::to_string(c.seq_length) + " is not a multiple of context_parallel=" + std::to_string(c.cp);
  }
  if (c.sp && (c.seq_length / c.cp) % c.tp != 0) {
    return "seq_length=" + std::to_string(c.seq_length) + " per context-parallel rank is not a multiple of tensor_parallel=" +
           std::to_string(c.tp) + " (sequence parallelism splits the sequence)";
  }
  return "";
}

const char* to_string(Precision v) {
  switch (v) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kBf16Amp: return "bf16-amp";
    case Precision::kFp16Amp: return "fp16-amp";
    case Precision::kFp8: return "fp8";
  }
  return "?";
}
const char* to_string(Optimizer v) {
  switch (v) {
    case Optimizer::kAdamW: return "adamw";
    case Optimizer::kAdamW8bit: return "adamw-8bit";
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kAdafactor: return "adafactor";
    case Optimizer::kLion: return "lion";
  }
  return "?";
}
const char* to_string(OptimizerImpl v) {
  return v == OptimizerImpl::kForeach ? "foreach" : v == OptimizerImpl::kFused ? "fused" : "loop";
}
const char* to_string(Recompute v) {
  return v == Recompute::kNone ? "none" : v == Recompute::kSelective ? "selective" : "full";
}
const char* to_string(Attention v) { return v == Attention::kEager ? "eager" : "flash"; }
const char* to_string(Ops v) { return v == Ops::kEager ? "eager" : "fused"; }
const char* to_string(Loss v) { return v == Loss::kStandard ? "standard" : v == Loss::kChunked ? "chunked" : "fused"; }
const char* to_string(Sharding v) {
  switch (v) {
    case Sharding::kZero: return "zero";
    case Sharding::kFsdpFull: return "fsdp-full";
    case Sharding::kFsdpGradOp: return "fsdp-grad-op";
    case Sharding::kFsdpHybrid: return "fsdp-hybrid";
  }
  return "?";
}
const char* to_string(Mlp v) { return v == Mlp::kSwiGlu ? "swiglu" : "gelu"; }
const char* to_string(Norm v) { return v == Norm::kRmsNorm ? "rmsnorm" : "layernorm"; }

}  // namespace trainfit
