// The request: the seed simulator's fields plus trainfit's extensions.
// Every field is optional here; resolve() (config.h) fills defaults and validates.
// Field names are an API contract shared by the JSON API, the CLI and the Slurm plugins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit {

struct Request {
  // --- the seed's fields ---
  std::optional<double> model_params_b;
  std::optional<int64_t> num_gpus;
  std::optional<double> gpu_memory_gb;
  std::optional<int64_t> micro_batch;
  std::optional<int64_t> seq_length;
  std::optional<int64_t> num_layers;
  std::optional<int64_t> hidden_dim;
  std::optional<int64_t> precision_bits;
  std::optional<int64_t> zero_stage;
  std::optional<int64_t> grad_ckpt;
  // --- geometry ---
  std::optional<std::string> model;
  std::optional<std::string> model_label;  // the name shown for a custom geometry (an HF config's)
  std::optional<int64_t> num_heads;
  std::optional<int64_t> num_kv_heads;
  std::optional<int64_t> ffn_hidden;
  std::optional<int64_t> vocab_size;
  std::optional<bool> tied_embeddings;
  std::optional<std::string> mlp;
  std::optional<std::string> norm;
  std::optional<bool> dropout;
  std::optional<std::string> bias;
  std::optional<int64_t> learned_positions;
  std::optional<int64_t> num_experts;
  std::optional<int64_t> experts_per_token;
  std::optional<int64_t> moe_ffn_hidden;
  std::optional<int64_t> head_dim;     // when not hidden_dim / num_heads (Mistral-NeMo, Gemma, Qwen3)
  std::optional<bool> qk_norm;         // RMSNorm on queries and keys (Qwen3, Gemma 3)
  std::optional<bool> sandwich_norm;   // norms after attention and MLP too (Gemma 2/3)
  std::optional<bool> qk_norm_full;    // q/k norms over the whole projection (OLMo 2)
  std::optional<int64_t> kv_lora_rank;   // multi-head latent attention (DeepSeek-V2/V3)
  std::optional<int64_t> q_lora_rank;
  std::optional<int64_t> rope_head_dim;
  std::optional<int64_t> v_head_dim;
  std::optional<int64_t> shared_ffn_hidden;  // MoE shared experts, intermediate size together
  std::optional<bool> shared_expert_gate;
  std::optional<int64_t> dense_layers;       // MoE: leading dense layers
  // --- the framework whose words the request uses (presets.cpp) ---
  std::optional<std::string> framework;
  std::optional<std::string> framework_version;  // the release used, e.g. "4.45" (transformers)
  // --- numerics ---
  std::optional<std::string> precision;
  std::optional<std::string> optimizer;
  std::optional<std::string> optimizer_impl;
  std::optional<bool> fp32_grads;
  // --- activations ---
  std::optional<std::string> recompute;
  std::optional<std::string> attention;
  std::optional<std::string> ops;
  std::optional<bool> logits_fp32;
  std::optional<std::string> loss;
  std::optional<bool> held_logits;     // the logits stay referenced through backward
  std::optional<bool> use_reentrant;   // checkpointing style: reentrant (forward under no_grad) or not
  std::optional<bool> autocast_cache;  // torch.autocast(cache_enabled=...): casts of fp32 weights kept to the region's exit
  std::optional<int64_t> recompute_every;  // checkpoint one layer in N
  std::optional<bool> compile;         // torch.compile of the layers
  std::optional<bool> compile_loss;    // the loss compiled too (default: as compile)
  std::optional<std::string> logits_upcast;  // loss | forward: where the fp32 upcast happens
  std::optional<bool> logits_shift_copy;     // the loss copies the shifted logits
  std::optional<bool> moe_expert_loop;       // MoE experts in a Python loop with index_add_ (HF)
  std::optional<bool> ddp_full_buckets;      // PyTorch DDP's buckets hold a full gradient copy
  // --- parameter-efficient fine-tuning ---
  std::optional<std::string> adapter;  // none | lora | qlora
  std::optional<int64_t> lora_rank;
  std::optional<std::string> lora_targets;  // qv | attention | all-linear | modules (q,k,v,o,gate,up,down,qkv,embedding,lm_head)
  std::optional<std::string> base_dtype;    // fp32 | bf16 | fp16 | nf4 | gptq | awq: the frozen base as loaded
  std::optional<std::string> lora_dtype;    // fp32 | bf16 | fp16: the adapters' dtype
  std::optional<bool> dora;                 // weight-decomposed LoRA (PEFT use_dora)
  std::optional<std::string> modules_to_save;  // embedding, lm_head: trained in full beside the adapters
  std::optional<bool> kbit_fp32_rest;       // PEFT prepare_model_for_kbit_training: unquantized params in fp32
  std::optional<std::string> nf4_kernel;     // bitsandbytes | torchao: who runs the NF4 matmuls
  std::optional<std::string> bitsandbytes_version;  // the bitsandbytes release, e.g. "0.43.1"
  std::optional<bool> nf4_saves_input;       // bitsandbytes' MatMul4Bit keeps each linear's input
  std::optional<double> lora_dropout;       // dropout on the adapters' input (LitGPT 0.05)
  // --- parallelism ---
  std::optional<int64_t> tensor_parallel;
  std::optional<int64_t> pipeline_parallel;
  std::optional<int64_t> virtual_pipeline;
  std::optional<bool> sequence_parallel;
  std::optional<int64_t> context_parallel;
  std::optional<int64_t> expert_parallel;
  std::optional<int64_t> num_microbatches;
  std::optional<std::string> report_stage;  // critical | first | last: the stage `measures` describe
  std::optional<std::string> sharding;
  std::optional<int64_t> fsdp_version;       // 1 (FullyShardedDataParallel) | 2 (fully_shard)
  std::optional<bool> fsdp_mixed_precision;  // FSDP gathers 16-bit parameters (param_dtype=bf16)
  std::optional<std::string> frozen_unit_grads;  // none | sharded | full: FSDP1 gradients of frozen weights
  std::optional<std::string> reduce_bucket_size;  // DeepSpeed ZeRO: elements, or "auto" (hidden^2)
  std::optional<std::string> stage3_prefetch_bucket_size;         // DeepSpeed ZeRO-3: elements or "auto"
  std::optional<std::string> stage3_max_live_parameters;          // DeepSpeed ZeRO-3: elements
  std::optional<std::string> stage3_max_reuse_distance;           // DeepSpeed ZeRO-3: elements
  std::optional<std::string> stage3_param_persistence_threshold;  // DeepSpeed ZeRO-3: elements or "auto"
  std::optional<std::string> allgather_bucket_size;  // DeepSpeed ZeRO-1/2: elements; checked, allocates nothing
  std::optional<bool> held_layer_inputs;  // FSDP1 + reentrant checkpoint: layer inputs and their grads kept to the end
  std::optional<int64_t> gpus_per_node;
  std::optional<int64_t> max_gpus;  // the largest job min_gpus_to_fit may answer
  // --- hardware ---
  std::optional<std::string> gpu;
  std::optional<std::string> fit_bound;  // point | likely_high: the figure a fit is judged on
  std::optional<bool> offload_optimizer;
  std::optional<bool> offload_params;
  std::optional<bool> runtime_overhead;
  std::optional<std::string> batch_lengths;  // fixed|rising|random
  std::optional<std::string> alloc_conf;     // PYTORCH_CUDA_ALLOC_CONF
  std::optional<int64_t> rising_lengths;     // steps whose lengths rise through N values up to seq_length
};

// kCount: a whole number or a word, kept as text (reduce_bucket_size: 5e8 or auto). JSON
// gives it as a string, an integer or a float that is a whole number (DeepSpeed configs
// write 5e8, which JSON parses as a float).
enum class FieldKind { kInt, kNumber, kBool, kString, kCount };
// Where a field belongs in help and the man page: what is trained, how, how it is split
// over the GPUs, and on what.
enum class FieldGroup { kModel, kTraining, kAdapters, kParallelism, kCluster };
// "model", "training", "adapters (LoRA, QLoRA)", "parallelism and sharding", "cluster".
TRAINFIT_API const char* field_group_title(FieldGroup group);

// One row per request field: the single table behind JSON parsing,
// CLI flags and the Slurm annotations.
struct FieldSpec {
  const char* name;     // JSON name, e.g. "seq_length"
  const char* flag;     // CLI long flag without dashes, e.g. "seq"
  FieldKind kind;
  const char* accepted; // what is accepted, for help and errors
  const char* help;
  FieldGroup group;
};

TRAINFIT_API const std::vector<FieldSpec>& request_fields();

// The longest text a string field takes (names, catalog keys, HF ids): a longer one is
// refused before any lookup, and an error quotes at most kMaxQuotedBytes of a value.
constexpr size_t kMaxStringFieldBytes = 256;

// Finds a field by JSON name or CLI flag; nullptr if none.
TRAINFIT_API const FieldSpec* find_field(const std::string& name_or_flag);

// Sets one field from text ("8", "true", "bf16"), as the CLI and key=value
// annotations give it. Errors name the field and what is accepted.
TRAINFIT_API Result<bool> set_field_from_text(Request& request, const std::string& name_or_flag,
                                              const std::string& text);

// Whether the field (JSON name or flag) is set in the request.
TRAINFIT_API bool field_is_set(const Request& request, const std::string& name_or_flag);

// A field's value as the request holds it (integer, number, boolean or text).
using FieldValue = std::variant<int64_t, double, bool, std::string>;

// The fields that are set, in the table's order, as (JSON name, value): exact values
// for writers (request_to_json), where to_key_values' text rounds numbers.
TRAINFIT_API std::vector<std::pair<std::string, FieldValue>> set_fields(const Request& request);

// Parses "key=value[,key=value...]" (keys: JSON names or CLI flags).
TRAINFIT_API Result<bool> apply_key_values(Request& request, const std::string& spec,
                                           char separator = ',');

// The fields that are set, as "name=value" joined by separator (JSON names).
TRAINFIT_API std::string to_key_values(const Request& request, char separator = ' ');

struct Geometry;

// How a face spells the two fields that can each give the whole geometry: "--model" and
// "--hf-config" (the CLI), "--llm-model" and "--llm-hf-config" (sbatch).
struct GeometrySourceKeys {
  std::string model;
  std::string hf_config;
};

// A catalog model and a Hugging Face config.json (hf_config_path, "" when none) both name
// the geometry: one would silently replace the other, so the pair is refused (kInconsistent,
// field "model"), naming both as the face spells them. Geometry fields given one by one
// (seq_length, num_layers, ...) still override the model's: they are not a second source.
TRAINFIT_API Result<bool> check_one_geometry_source(const Request& request, const std::string& hf_config_path,
                                                    const GeometrySourceKeys& keys);

// Sets every geometry field of a request from a geometry (e.g. read from a
// Hugging Face config.json); fields set afterwards still override it.
TRAINFIT_API void set_geometry(Request& request, const Geometry& geometry);

}  // namespace trainfit
