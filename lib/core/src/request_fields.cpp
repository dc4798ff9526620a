// The request field table and text -> field conversion, shared by the JSON
// parser, the CLI flags and the Slurm annotations (key=value).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <type_traits>
#include <string>
#include <variant>
#include <vector>

#include "trainfit/util/text.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/request.h"

namespace trainfit {
namespace {

using Member = std::variant<std::optional<int64_t> Request::*, std::optional<double> Request::*,
                            std::optional<bool> Request::*, std::optional<std::string> Request::*>;

struct Row {
  FieldSpec spec;
  Member member;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // seed
      {{"model_params_b", "params-b", FieldKind::kNumber, "number > 0 (billions)", "total parameters, in billions (overrides the geometry's count)", FieldGroup::kModel}, &Request::model_params_b},
      {{"num_gpus", "gpus", FieldKind::kInt, "integer >= 1", "GPUs in the job", FieldGroup::kCluster}, &Request::num_gpus},
      {{"gpu_memory_gb", "gpu-memory-gb", FieldKind::kNumber, "number > 0 (GiB)", "usable HBM per GPU in GiB (overrides --gpu)", FieldGroup::kCluster}, &Request::gpu_memory_gb},
      {{"micro_batch", "micro-batch", FieldKind::kInt, "integer >= 1", "sequences per micro-batch per data-parallel rank", FieldGroup::kTraining}, &Request::micro_batch},
      {{"seq_length", "seq", FieldKind::kInt, "integer >= 1", "tokens per sequence", FieldGroup::kTraining}, &Request::seq_length},
      {{"num_layers", "layers", FieldKind::kInt, "integer >= 1", "transformer layers", FieldGroup::kModel}, &Request::num_layers},
      {{"hidden_dim", "hidden", FieldKind::kInt, "integer >= 1", "hidden size", FieldGroup::kModel}, &Request::hidden_dim},
      {{"precision_bits", "precision-bits", FieldKind::kInt, "8|16|32", "seed precision: 16 = 16-bit weights+grads with fp32 master (fp16-amp), 32 = fp32, 8 = fp8", FieldGroup::kTraining}, &Request::precision_bits},
      {{"zero_stage", "zero", FieldKind::kInt, "0|1|2|3", "ZeRO stage", FieldGroup::kParallelism}, &Request::zero_stage},
      {{"reduce_bucket_size", "reduce-bucket-size", FieldKind::kCount, "integer from 1 to 1e12, or auto", "DeepSpeed ZeRO's gradient bucket in elements (zero_optimization.reduce_bucket_size; default 5e8); auto = hidden x hidden, as HF Trainer and accelerate fill it", FieldGroup::kParallelism}, &Request::reduce_bucket_size},
      {{"allgather_bucket_size", "allgather-bucket-size", FieldKind::kCount, "integer from 1 to 1e12", "DeepSpeed ZeRO-1/2's all-gather of the updated partitions, in elements (zero_optimization.allgather_bucket_size; default 5e8): accepted, does not change the figure (DeepSpeed v0.16.4 gathers into its flat 16-bit buffer in place)", FieldGroup::kParallelism}, &Request::allgather_bucket_size},
      {{"stage3_prefetch_bucket_size", "stage3-prefetch-bucket-size", FieldKind::kCount, "integer from 0 to 1e12, or auto", "DeepSpeed ZeRO-3 prefetch per call, elements (default 5e7; 0: off; auto: 0.9 x hidden^2)", FieldGroup::kParallelism}, &Request::stage3_prefetch_bucket_size},
      {{"stage3_max_live_parameters", "stage3-max-live-parameters", FieldKind::kCount, "integer from 0 to 1e12", "DeepSpeed ZeRO-3: prefetch stops at this many gathered elements (default 1e9)", FieldGroup::kParallelism}, &Request::stage3_max_live_parameters},
      {{"stage3_max_reuse_distance", "stage3-max-reuse-distance", FieldKind::kCount, "integer from 0 to 1e12", "DeepSpeed ZeRO-3: parameters reused within this many elements stay gathered (default 1e9)", FieldGroup::kParallelism}, &Request::stage3_max_reuse_distance},
      {{"stage3_param_persistence_threshold", "stage3-param-persistence-threshold", FieldKind::kCount, "integer from 0 to 1e12, or auto", "DeepSpeed ZeRO-3: parameters this small stay gathered (default 1e5; auto: 10 x hidden)", FieldGroup::kParallelism}, &Request::stage3_param_persistence_threshold},
      {{"grad_ckpt", "grad-ckpt", FieldKind::kInt, "0|1", "activation checkpointing (1 = full recompute)", FieldGroup::kTraining}, &Request::grad_ckpt},
      // geometry
      {{"model", "model", FieldKind::kString, "a catalog name or Hugging Face Hub id, ORG/NAME (trainfit models)", "model preset; fills the geometry", FieldGroup::kModel}, &Request::model},
      {{"model_label", "model-label", FieldKind::kString, "text of 1 to 100 printable characters", "name shown for a custom geometry (--hf-config sets it from the file)", FieldGroup::kModel}, &Request::model_label},
      {{"num_heads", "heads", FieldKind::kInt, "integer >= 1 dividing hidden_dim", "attention heads", FieldGroup::kModel}, &Request::num_heads},
      {{"num_kv_heads", "kv-heads", FieldKind::kInt, "integer >= 1 dividing num_heads", "key/value heads (GQA)", FieldGroup::kModel}, &Request::num_kv_heads},
      {{"ffn_hidden", "ffn", FieldKind::kInt, "integer >= 1", "MLP intermediate size", FieldGroup::kModel}, &Request::ffn_hidden},
      {{"vocab_size", "vocab", FieldKind::kInt, "integer >= 1", "vocabulary size", FieldGroup::kModel}, &Request::vocab_size},
      {{"tied_embeddings", "tied-embeddings", FieldKind::kBool, "true|false", "input embedding shared with the LM head", FieldGroup::kModel}, &Request::tied_embeddings},
      {{"mlp", "mlp", FieldKind::kString, "swiglu|gelu", "MLP type", FieldGroup::kModel}, &Request::mlp},
      {{"norm", "norm", FieldKind::kString, "rmsnorm|layernorm", "normalization layer", FieldGroup::kModel}, &Request::norm},
      {{"dropout", "dropout", FieldKind::kBool, "true|false", "dropout masks saved for backward (GPT/Megatron style)", FieldGroup::kModel}, &Request::dropout},
      {{"bias", "bias", FieldKind::kString, "none|qkv|all", "linear-layer biases (qkv: Qwen2; all: GPT)", FieldGroup::kModel}, &Request::bias},
      {{"learned_positions", "learned-positions", FieldKind::kInt, "integer >= 0", "rows of a learned position table (GPT; 0 = RoPE)", FieldGroup::kModel}, &Request::learned_positions},
      {{"num_experts", "experts", FieldKind::kInt, "integer >= 0", "MoE routed experts (0 = dense)", FieldGroup::kModel}, &Request::num_experts},
      {{"experts_per_token", "experts-per-token", FieldKind::kInt, "integer >= 1 and <= num_experts", "MoE top-k", FieldGroup::kModel}, &Request::experts_per_token},
      {{"moe_ffn_hidden", "moe-ffn", FieldKind::kInt, "integer >= 1", "expert MLP intermediate size", FieldGroup::kModel}, &Request::moe_ffn_hidden},
      {{"head_dim", "head-dim", FieldKind::kInt, "integer >= 1", "attention head size when not hidden_dim/num_heads", FieldGroup::kModel}, &Request::head_dim},
      {{"qk_norm", "qk-norm", FieldKind::kBool, "true|false", "RMSNorm on queries and keys (Qwen3, Gemma 3)", FieldGroup::kModel}, &Request::qk_norm},
      {{"sandwich_norm", "sandwich-norm", FieldKind::kBool, "true|false", "extra norms after attention and MLP (Gemma 2/3)", FieldGroup::kModel}, &Request::sandwich_norm},
      {{"qk_norm_full", "qk-norm-full", FieldKind::kBool, "true|false", "the q/k norms span all heads, heads x head_dim (OLMo 2)", FieldGroup::kModel}, &Request::qk_norm_full},
      {{"kv_lora_rank", "kv-lora-rank", FieldKind::kInt, "integer >= 1", "multi-head latent attention: the key/value latent size (DeepSeek-V2/V3; head_dim = q/k head)", FieldGroup::kModel}, &Request::kv_lora_rank},
      {{"q_lora_rank", "q-lora-rank", FieldKind::kInt, "integer >= 0", "multi-head latent attention: the query bottleneck (0 = a direct q projection)", FieldGroup::kModel}, &Request::q_lora_rank},
      {{"rope_head_dim", "rope-head-dim", FieldKind::kInt, "integer >= 1 and < head_dim", "multi-head latent attention: the rotary part of each q/k head", FieldGroup::kModel}, &Request::rope_head_dim},
      {{"v_head_dim", "v-head-dim", FieldKind::kInt, "integer >= 1", "multi-head latent attention: the value head size (default head_dim)", FieldGroup::kModel}, &Request::v_head_dim},
      {{"shared_ffn_hidden", "shared-ffn", FieldKind::kInt, "integer >= 0", "MoE shared experts' intermediate size, all together (0 = none)", FieldGroup::kModel}, &Request::shared_ffn_hidden},
      {{"shared_expert_gate", "shared-expert-gate", FieldKind::kBool, "true|false", "a sigmoid gate on the shared expert (Qwen2-MoE)", FieldGroup::kModel}, &Request::shared_expert_gate},
      {{"dense_layers", "dense-layers", FieldKind::kInt, "integer >= 0 and < num_layers", "MoE: the first layers keep a dense MLP of ffn_hidden (DeepSeek)", FieldGroup::kModel}, &Request::dense_layers},
      // the framework whose words the request uses
      {{"framework", "framework", FieldKind::kString, "generic|hf|deepspeed|torchtune|torchtitan|megatron|litgpt|custom", "training framework: its words (precision, recompute) mean what they mean there, and its defaults fill the rest", FieldGroup::kTraining}, &Request::framework},
      {{"framework_version", "framework-version", FieldKind::kString, "a release number, e.g. 4.45 or 5.2 (hf: transformers)", "the framework release whose conventions apply (default: the newest modelled)", FieldGroup::kTraining}, &Request::framework_version},
      // numerics
      {{"precision", "precision", FieldKind::kString, "fp32|bf16|bf16-amp|fp16-amp|fp8, or the framework's word (Lightning's bf16-mixed, bf16-true, 16-mixed, 16-true, 32-true; fp16; litgpt also 16 and 32)", "numerics regime", FieldGroup::kTraining}, &Request::precision},
      {{"optimizer", "optimizer", FieldKind::kString, "adamw|adamw-8bit|sgd|adafactor|lion", "optimizer", FieldGroup::kTraining}, &Request::optimizer},
      {{"optimizer_impl", "optimizer-impl", FieldKind::kString, "foreach|fused|loop", "optimizer implementation: foreach (PyTorch's CUDA default), fused, or the single-tensor loop (CPU default)", FieldGroup::kTraining}, &Request::optimizer_impl},
      {{"fp32_grads", "fp32-grads", FieldKind::kBool, "true|false", "fp32 gradient buffers (Megatron main_grad / DeepSpeed): 18 B/param AMP Adam", FieldGroup::kTraining}, &Request::fp32_grads},
      // activations
      {{"recompute", "recompute", FieldKind::kString, "none|selective|full|op", "activation recomputation (selective: Megatron's core attention; op: torchtitan's op-level policy)", FieldGroup::kTraining}, &Request::recompute},
      {{"recompute_every", "recompute-every", FieldKind::kInt, "integer >= 1", "checkpoint one layer in N (torchtitan selective N, torchtune ac_option)", FieldGroup::kTraining}, &Request::recompute_every},
      {{"compile", "compile", FieldKind::kBool, "true|false", "torch.compile of the layers (fuses elementwise chains)", FieldGroup::kTraining}, &Request::compile},
      {{"compile_loss", "compile-loss", FieldKind::kBool, "true|false", "the loss compiled with the layers (a fused cross-entropy); default: as compile (torchtitan's [compile] components; before that section, [training] compile left the loss eager)", FieldGroup::kTraining}, &Request::compile_loss},
      {{"attention", "attention", FieldKind::kString, "eager|flash", "attention kernel", FieldGroup::kTraining}, &Request::attention},
      {{"ops", "ops", FieldKind::kString, "eager|fused", "layer implementation: eager PyTorch modules (HF transformers) or fused kernels (Megatron, Transformer Engine)", FieldGroup::kTraining}, &Request::ops},
      {{"logits_fp32", "logits-fp32", FieldKind::kBool, "true|false", "logits upcast to fp32 for the loss", FieldGroup::kTraining}, &Request::logits_fp32},
      {{"loss", "loss", FieldKind::kString, "standard|chunked|fused", "cross-entropy implementation", FieldGroup::kTraining}, &Request::loss},
      {{"held_logits", "held-logits", FieldKind::kBool, "true|false", "the logits stay referenced through backward (a loop that keeps the model output)", FieldGroup::kTraining}, &Request::held_logits},
      {{"use_reentrant", "use-reentrant", FieldKind::kBool, "true|false", "activation checkpointing's style (torch.utils.checkpoint use_reentrant); false keeps what an autograd Function holds on ctx (bitsandbytes < 0.43.2: each 4-bit input). Default: hf true before 5.0, false from 5.0; torchtune, torchtitan, litgpt false; others true", FieldGroup::kTraining}, &Request::use_reentrant},
      {{"autocast_cache", "autocast-cache", FieldKind::kBool, "true|false", "torch.autocast's cast cache (cache_enabled, default true): checkpointed layers' weight casts live through the forward", FieldGroup::kTraining}, &Request::autocast_cache},
      {{"logits_upcast", "logits-upcast", FieldKind::kString, "loss|forward", "where the logits are upcast to fp32: in the loss (both copies alive) or in the model's forward (the 16-bit logits freed at once)", FieldGroup::kTraining}, &Request::logits_upcast},
      {{"logits_shift_copy", "logits-shift-copy", FieldKind::kBool, "true|false", "the loss copies the shifted logits (HF before 4.49)", FieldGroup::kTraining}, &Request::logits_shift_copy},
      {{"moe_expert_loop", "moe-expert-loop", FieldKind::kBool, "true|false", "MoE: the experts run one after another in a Python loop, each added back with index_add_ (transformers' MixtralSparseMoeBlock; default true for hf): each weighted expert output is saved, and backward holds one expert's gradients at a time", FieldGroup::kTraining}, &Request::moe_expert_loop},
      {{"ddp_full_buckets", "ddp-full-buckets", FieldKind::kBool, "true|false", "PyTorch DDP: gradient buckets as large as the gradients, kept through the step", FieldGroup::kTraining}, &Request::ddp_full_buckets},
      // parameter-efficient fine-tuning
      {{"adapter", "adapter", FieldKind::kString, "none|lora|qlora", "train low-rank adapters on a frozen base (qlora: 4-bit NF4 base)", FieldGroup::kAdapters}, &Request::adapter},
      {{"lora_rank", "lora-rank", FieldKind::kInt, "integer >= 1", "LoRA rank r", FieldGroup::kAdapters}, &Request::lora_rank},
      {{"lora_targets", "lora-targets", FieldKind::kString, "qv|attention|all-linear, or modules joined by ',' or '+': q,k,v,o,gate,up,down,qkv,embedding,lm_head (PEFT names too: q_proj, c_attn, embed_tokens)", "layers given adapters", FieldGroup::kAdapters}, &Request::lora_targets},
      {{"base_dtype", "base-dtype", FieldKind::kString, "fp32|bf16|fp16|nf4|gptq|awq", "the frozen base as loaded (torch_dtype, or a 4-bit quantization)", FieldGroup::kAdapters}, &Request::base_dtype},
      {{"lora_dtype", "lora-dtype", FieldKind::kString, "fp32|bf16|fp16", "the adapters' dtype (PEFT: fp32 unless autocast_adapter_dtype=False)", FieldGroup::kAdapters}, &Request::lora_dtype},
      {{"dora", "dora", FieldKind::kBool, "true|false", "DoRA (PEFT use_dora): a magnitude vector per target, each target's base output saved", FieldGroup::kAdapters}, &Request::dora},
      {{"modules_to_save", "modules-to-save", FieldKind::kString, "embedding, lm_head or both (',' or '+')", "modules trained in full beside the adapters (PEFT modules_to_save)", FieldGroup::kAdapters}, &Request::modules_to_save},
      {{"nf4_kernel", "nf4-kernel", FieldKind::kString, "bitsandbytes|torchao", "who runs an NF4 base's matmuls: bitsandbytes' MatMul4Bit (before 0.43.2 it also saves each linear's input), torchao's LinearNF4 (torchtune) only the weight; default torchao under torchtune, else bitsandbytes", FieldGroup::kAdapters}, &Request::nf4_kernel},
      {{"bitsandbytes_version", "bitsandbytes-version", FieldKind::kString, "a release number, e.g. 0.43.1", "the bitsandbytes release running an NF4 base (default: the newest modelled); before 0.43.2 its 4-bit matmul keeps each linear's input for backward", FieldGroup::kAdapters}, &Request::bitsandbytes_version},
      {{"nf4_saves_input", "nf4-saves-input", FieldKind::kBool, "true|false", "bitsandbytes' 4-bit matmul keeps each linear's input for backward (default: by bitsandbytes_version, true before 0.43.2)", FieldGroup::kAdapters}, &Request::nf4_saves_input},
      {{"kbit_fp32_rest", "kbit-fp32-rest", FieldKind::kBool, "true|false", "QLoRA: the parameters left unquantized (embeddings, norms, LM head) cast to fp32, as PEFT's prepare_model_for_kbit_training does; the residual stream is then fp32 (default: hf without FSDP)", FieldGroup::kAdapters}, &Request::kbit_fp32_rest},
      {{"lora_dropout", "lora-dropout", FieldKind::kNumber, "number from 0 to 1", "dropout on the adapters' input: each target then saves its own mask and input", FieldGroup::kAdapters}, &Request::lora_dropout},
      // parallelism
      {{"tensor_parallel", "tp", FieldKind::kInt, "integer >= 1 dividing num_heads", "tensor-parallel size", FieldGroup::kParallelism}, &Request::tensor_parallel},
      {{"pipeline_parallel", "pp", FieldKind::kInt, "integer >= 1 and <= num_layers", "pipeline-parallel size", FieldGroup::kParallelism}, &Request::pipeline_parallel},
      {{"virtual_pipeline", "vpp", FieldKind::kInt, "integer >= 1", "interleaved pipeline chunks per stage", FieldGroup::kParallelism}, &Request::virtual_pipeline},
      {{"sequence_parallel", "sp", FieldKind::kBool, "true|false", "Megatron sequence parallelism (with TP)", FieldGroup::kParallelism}, &Request::sequence_parallel},
      {{"context_parallel", "cp", FieldKind::kInt, "integer >= 1 dividing seq_length", "context-parallel size", FieldGroup::kParallelism}, &Request::context_parallel},
      {{"expert_parallel", "ep", FieldKind::kInt, "integer >= 1 dividing num_experts", "expert-parallel size", FieldGroup::kParallelism}, &Request::expert_parallel},
      {{"num_microbatches", "microbatches", FieldKind::kInt, "integer >= 1", "micro-batches per step (gradient accumulation / pipeline)", FieldGroup::kTraining}, &Request::num_microbatches},
      {{"report_stage", "report-stage", FieldKind::kString, "critical|first|last", "pipeline stage breakdown.measures describe (Megatron logs the last rank's; the fit uses the critical one)", FieldGroup::kParallelism}, &Request::report_stage},
      {{"sharding", "sharding", FieldKind::kString, "zero|fsdp-full|fsdp-grad-op|fsdp-hybrid|zero-redundancy", "sharding implementation", FieldGroup::kParallelism}, &Request::sharding},
      {{"fsdp_version", "fsdp-version", FieldKind::kInt, "1|2", "FSDP1 (FullyShardedDataParallel: the root unit stays gathered) or FSDP2 (fully_shard); default by framework", FieldGroup::kParallelism}, &Request::fsdp_version},
      {{"fsdp_mixed_precision", "fsdp-mixed-precision", FieldKind::kBool, "true|false", "FSDP gathers parameters in 16-bit (MixedPrecision param_dtype=bf16); false: in their stored dtype", FieldGroup::kParallelism}, &Request::fsdp_mixed_precision},
      {{"frozen_unit_grads", "frozen-unit-grads", FieldKind::kString, "none|sharded|full", "LoRA under FSDP1 with units mixing frozen and trainable weights: the frozen ones get gradients, sharded or (no_sync accumulation) full; default by framework release", FieldGroup::kParallelism}, &Request::frozen_unit_grads},
      {{"held_layer_inputs", "held-layer-inputs", FieldKind::kBool, "true|false", "FSDP1 with frozen layer units, each inside a reentrant checkpoint that wraps the unit (HF gradient checkpointing over PEFT's FSDP wrap policy): every layer's input and its gradient stay until backward ends; default true for hf LoRA/QLoRA on FSDP1 with full recompute; false where the checkpoint runs inside the unit (apply_activation_checkpointing after FSDP)", FieldGroup::kParallelism}, &Request::held_layer_inputs},
      {{"gpus_per_node", "gpus-per-node", FieldKind::kInt, "integer >= 1", "GPUs per node (min_gpus_to_fit uses whole nodes beyond one)", FieldGroup::kCluster}, &Request::gpus_per_node},
      {{"max_gpus", "max-gpus", FieldKind::kInt, "integer from 1 to 1048576", "the largest job min_gpus_to_fit may answer (default 16384, the largest published training job); beyond it the answer is none, with the change that fits", FieldGroup::kCluster}, &Request::max_gpus},
      {{"fit_bound", "fit-bound", FieldKind::kString, "point|likely_high|likely_low", "the figure a fit (and min_gpus_to_fit) is judged on: the prediction, or an end of its likely range (default point)", FieldGroup::kCluster}, &Request::fit_bound},
      // hardware
      {{"gpu", "gpu", FieldKind::kString, "a catalog name (trainfit gpus)", "GPU type; sets the capacity", FieldGroup::kCluster}, &Request::gpu},
      {{"offload_optimizer", "offload-optimizer", FieldKind::kBool, "true|false", "optimizer states, master weights and fp32 gradients in host RAM; under DeepSpeed ZeRO-3 its 16-bit gradient partitions too (the GPU keeps the reduce bucket)", FieldGroup::kParallelism}, &Request::offload_optimizer},
      {{"offload_params", "offload-params", FieldKind::kBool, "true|false", "parameters in host RAM (ZeRO-3/FSDP only)", FieldGroup::kParallelism}, &Request::offload_params},
      {{"runtime_overhead", "runtime-overhead", FieldKind::kBool, "true|false", "count CUDA context, NCCL buffers and allocator reserve", FieldGroup::kCluster}, &Request::runtime_overhead},
      {{"batch_lengths", "batch-lengths", FieldKind::kString, "fixed|rising|random", "how step lengths vary: fixed (every step at seq_length), rising (a length curriculum through rising_lengths values: the allocator keeps each shorter step's segments), random (padded to each batch's longest, in random order: judged at seq_length, the longest)", FieldGroup::kTraining}, &Request::batch_lengths},
      {{"alloc_conf", "alloc-conf", FieldKind::kString, "PYTORCH_CUDA_ALLOC_CONF text, e.g. expandable_segments:True", "the job's PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True lets freed blocks merge and be reused at any size (no reserve beyond 5%, no growth over rising lengths)", FieldGroup::kCluster}, &Request::alloc_conf},
      {{"rising_lengths", "rising-lengths", FieldKind::kInt, "integer >= 1", "steps whose lengths rise through N evenly spaced values up to seq_length (a length curriculum): the allocator reserve grows", FieldGroup::kTraining}, &Request::rising_lengths},
  };
  return table;
}

// By JSON name or CLI flag; indexed once (annotations look fields up for every job).
const Row* find_row(const std::string& key) {
  static const std::unordered_map<std::string, const Row*> index = [] {
    std::unordered_map<std::string, const Row*> out;
    for (const Row& row : rows()) {
      out.emplace(row.spec.name, &row);
      out.emplace(row.spec.flag, &row);  // the first row that has a key keeps it, as a linear search would
    }
    return out;
  }();
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace

const char* field_group_title(FieldGroup group) {
  switch (group) {
    case FieldGroup::kModel: return "model";
    case FieldGroup::kTraining: return "training";
    case FieldGroup::kAdapters: return "adapters (LoRA, QLoRA)";
    case FieldGroup::kParallelism: return "parallelism and sharding";
    case FieldGroup::kCluster: return "cluster";
  }
  return "other";
}

const std::vector<FieldSpec>& request_fields() {
  static const std::vector<FieldSpec> specs = [] {
    std::vector<FieldSpec> out;
    for (const Row& row : rows()) out.push_back(row.spec);
    return out;
  }();
  return specs;
}

const FieldSpec* find_field(const std::string& name_or_flag) {
  const Row* row = find_row(name_or_flag);
  return row ? &row->spec : nullptr;
}

Error unknown_field_error(const std::string& key) {
  std::vector<std::string> names;
  std::string list;
  for (const Row& row : rows()) {
    names.push_back(row.spec.name);
    list += list.empty() ? "" : ", ";
    list += row.spec.name;
  }
  std::string hint = did_you_mean(key, names);
  return make_error(ErrorCode::kUnknownField, quoted_excerpt(key),
                    "unknown field '" + quoted_excerpt(key) + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                        "; known fields: " + list);
}

Result<bool> set_field_from_text(Request& request, const std::string& key, const std::string& raw) {
  const Row* row = find_row(key);
  if (row == nullptr) return unknown_field_error(key);
  const FieldSpec& spec = row->spec;
  const std::string text = trim(raw);
  auto bad = [&](const std::string& accepted) {
    return make_error(ErrorCode::kInvalidValue, spec.name,
                      std::string(spec.name) + "='" + quoted_excerpt(text) + "' is not valid; accepted: " + accepted);
  };
  switch (spec.kind) {
    case FieldKind::kInt: {
      int64_t value = 0;
      if (!parse_int(text, &value)) return bad(spec.accepted);
      request.*std::get<std::optional<int64_t> Request::*>(row->member) = value;
      return true;
    }
    case FieldKind::kNumber: {
      double value = 0;
      if (!parse_number(text, &value)) return bad(spec.accepted);
      request.*std::get<std::optional<double> Request::*>(row->member) = value;
      return true;
    }
    case FieldKind::kBool: {
      bool value = false;
      if (!parse_bool(text, &value)) return bad(spec.accepted);
      request.*std::get<std::optional<bool> Request::*>(row->member) = value;
      return true;
    }
    case FieldKind::kString:
    case FieldKind::kCount:  // kept as text; resolve reads the number or the word
      if (text.empty()) return bad(spec.accepted);
      if (text.size() > kMaxStringFieldBytes) {
        return bad("at most " + std::to_string(kMaxStringFieldBytes) + " bytes (" + spec.accepted + ")");
      }
      request.*std::get<std::optional<std::string> Request::*>(row->member) = text;
      return true;
  }
  return bad(spec.accepted);
}

bool field_is_set(const Request& request, const std::string& key) {
  const Row* row = find_row(key);
  if (row == nullptr) return false;
  return std::visit([&](auto member) { return (request.*member).has_value(); }, row->member);
}

std::vector<std::pair<std::string, FieldValue>> set_fields(const Request& request) {
  std::vector<std::pair<std::string, FieldValue>> out;
  for (const Row& row : rows()) {
    std::visit(
        [&](auto member) {
          if (const auto& field = request.*member) out.emplace_back(row.spec.name, FieldValue(*field));
        },
        row.member);
  }
  return out;
}

std::string to_key_values(const Request& request, char separator) {
  std::string out;
  for (const Row& row : rows()) {
    std::string value;
    std::visit(
        [&](auto member) {
          const auto& field = request.*member;
          if (!field) return;
          using T = std::decay_t<decltype(*field)>;
          if constexpr (std::is_same_v<T, std::string>) value = *field;
          else if constexpr (std::is_same_v<T, bool>) value = *field ? "true" : "false";
          else if constexpr (std::is_same_v<T, double>) {
            char buffer[32];
            std::snprintf(buffer, sizeof buffer, "%g", *field);
            value = buffer;
          } else value = std::to_string(*field);
        },
        row.member);
    if (value.empty()) continue;
    out += (out.empty() ? "" : std::string(1, separator)) + row.spec.name + "=" + value;
  }
  return out;
}

void set_geometry(Request& request, const Geometry& g) {
  request.num_layers = g.layers;
  request.hidden_dim = g.hidden;
  request.num_heads = g.heads;
  request.num_kv_heads = g.kv_heads;
  request.ffn_hidden = g.ffn;
  request.vocab_size = g.vocab;
  request.tied_embeddings = g.tied;
  request.mlp = to_string(g.mlp);
  request.norm = to_string(g.norm);
  request.bias = g.bias == Bias::kAll ? "all" : g.bias == Bias::kQkv ? "qkv" : "none";
  request.learned_positions = g.learned_positions;
  request.dropout = g.dropout;
  request.num_experts = g.experts;
  if (g.head_dim > 0) request.head_dim = g.head_dim;
  if (g.qk_norm) request.qk_norm = true;
  if (g.sandwich_norm) request.sandwich_norm = true;
  if (g.qk_norm_full) request.qk_norm_full = true;
  if (g.kv_lora_rank > 0) {
    request.kv_lora_rank = g.kv_lora_rank;
    request.q_lora_rank = g.q_lora_rank;
    request.rope_head_dim = g.rope_head_dim;
  }
  if (g.v_head_dim > 0) request.v_head_dim = g.v_head_dim;
  if (g.experts > 0 && g.shared_ffn > 0) request.shared_ffn_hidden = g.shared_ffn;
  if (g.experts > 0 && g.shared_expert_gate) request.shared_expert_gate = true;
  if (g.experts > 0 && g.dense_layers > 0) request.dense_layers = g.dense_layers;
  if (g.experts > 0) {
    request.experts_per_token = g.top_k;
    request.moe_ffn_hidden = g.moe_ffn;
  }
}

Result<bool> apply_key_values(Request& request, const std::string& spec, char separator) {
  for (const std::string& item : split(spec, separator)) {
    const std::string entry = trim(item);
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      return make_error(ErrorCode::kMalformed, entry,
                        "'" + entry + "' is not key=value; expected e.g. seq_length=8192");
    }
    Result<bool> set = set_field_from_text(request, trim(entry.substr(0, eq)), entry.substr(eq + 1));
    if (!set) return set.error();
  }
  return true;
}

}  // namespace trainfit
