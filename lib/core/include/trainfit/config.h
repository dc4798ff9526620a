// The resolved configuration: every number concrete, every choice an enum.
// resolve() turns a Request into a Config (defaults, presets, validation);
// the estimator core only ever sees a Config.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit {

enum class Mlp { kSwiGlu, kGelu };
enum class Norm { kRmsNorm, kLayerNorm };
// A GPU's generation, from the catalog's "architecture" (site GPUs say theirs): what the
// libraries key their workspace sizes on (compute capability 9.0 is Hopper).
enum class GpuArchitecture { kOther, kVolta, kTuring, kAmpere, kAda, kHopper, kBlackwell, kCdna2, kCdna3 };
enum class Bias { kNone, kQkv, kAll };
// How step lengths vary across the run (the caching allocator keeps what earlier steps took).
enum class BatchLengths { kFixed, kRising, kRandom };
enum class Precision { kFp32, kBf16, kBf16Amp, kFp16Amp, kFp8 };
enum class Optimizer { kAdamW, kAdamW8bit, kSgd, kAdafactor, kLion };
// PyTorch's three optimizer implementations: multi-tensor (the CUDA default), fused
// kernels, and the single-tensor loop (the CPU default).
enum class OptimizerImpl { kForeach, kFused, kLoop };
// selective: Megatron's core-attention recompute; op: torchtitan's op-level policy
// (saves the outputs of every other matmul and of attention, recomputes the rest).
enum class Recompute { kNone, kSelective, kFull, kOp };
// Whose words the request is in (presets.cpp): the training framework.
enum class Framework { kGeneric, kHf, kDeepSpeed, kTorchtune, kTorchtitan, kMegatron, kLitgpt, kCustom };
// Parameter-efficient fine-tuning: low-rank adapters on a frozen base (4-bit NF4 for QLoRA).
enum class Adapter { kNone, kLora, kQlora };
// LoRA target modules (PEFT target_modules), one bit each; qv, attention and all-linear are
// unions of them (lora_modules.cpp).
enum LoraModule : uint32_t {
  kLoraQ = 1u << 0, kLoraK = 1u << 1, kLoraV = 1u << 2, kLoraO = 1u << 3,
  kLoraGate = 1u << 4, kLoraUp = 1u << 5, kLoraDown = 1u << 6,
  kLoraQkv = 1u << 7,        // a fused q,k,v projection (GPT-2 c_attn, Phi-3 qkv_proj)
  kLoraEmbedding = 1u << 8,  // the input embedding (PEFT lora.Embedding)
  kLoraLmHead = 1u << 9,     // the output projection
};
// The dtype the frozen base is loaded in (from_pretrained torch_dtype / quantization):
// kFollow = the parameter dtype of the precision regime.
enum class BaseDtype { kFollow, kFp32, kBf16, kFp16, kNf4, kGptq, kAwq };
// Where the fp32 upcast of the logits happens: in the loss (HF >= 4.46, both the 16-bit logits
// and the upcast alive) or in the model's forward (HF < 4.46: the 16-bit logits freed at once).
enum class LogitsUpcast { kInLoss, kInForward };
// Gradients of a LoRA job's frozen base weights. FSDP1 with use_orig_params=True flattens a
// wrap unit's frozen and trainable parameters into one FlatParameter that requires grad, so
// the frozen ones get gradients too (torch/distributed/fsdp/_flat_param.py, v2.1): kSharded
// when they are reduce-scattered after each backward, kFull when no_sync() gradient
// accumulation keeps them unsharded until the synchronizing micro-batch (FSDP.no_sync docs).
enum class FrozenUnitGrads { kNone, kSharded, kFull };
enum class Attention { kEager, kFlash };
// How the layers are implemented: PyTorch eager modules as in HF transformers, or fused
// kernels as in Megatron-LM / Transformer Engine. It decides which intermediates are saved.
enum class Ops { kEager, kFused };
enum class Loss { kStandard, kChunked, kFused };
// kZeroRedundancy: torch.distributed.optim.ZeroRedundancyOptimizer over DDP (optimizer states
// sharded, gradients all-reduced through DDP's buckets).
enum class Sharding { kZero, kFsdpFull, kFsdpGradOp, kFsdpHybrid, kZeroRedundancy };
// Which pipeline stage breakdown.measures describe: the fit always uses the critical one.
enum class ReportStage { kCritical, kFirst, kLast };
// Which figure a fit is judged on: the prediction (kPoint), its likely range's high end
// (kLikelyHigh: min_gpus_to_fit then leaves room for the published suite's misses of the class)
// or its low end (kLikelyLow: the fewest GPUs at which the step may fit).
enum class FitBound { kPoint, kLikelyHigh, kLikelyLow };

struct Geometry {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t ffn = 0;
  int64_t vocab = 0;
  bool tied = false;
  Mlp mlp = Mlp::kSwiGlu;
  Norm norm = Norm::kRmsNorm;
  Bias bias = Bias::kNone;
  int64_t learned_positions = 0;  // rows of a learned position table (GPT); 0 = RoPE
  bool dropout = false;           // GPT/Megatron-style dropout masks saved for backward
  int64_t experts = 0;            // 0 = dense
  int64_t top_k = 0;
  int64_t moe_ffn = 0;
  double params_override = 0;     // model_params_b given: the authoritative total count
  int64_t head_dim = 0;           // 0 = hidden / heads
  bool qk_norm = false;           // q and k RMSNorm weights (head_dim each)
  bool sandwich_norm = false;     // post-attention and post-MLP norms (Gemma 2/3)
  bool qk_norm_full = false;      // the q and k norms span the whole projection, heads x head_dim (OLMo 2)
  // Multi-head latent attention (DeepSeek-V2/V3, modeling_deepseek_v3.py DeepseekV3Attention):
  // head_dim is the q/k head (qk_nope_head_dim + qk_rope_head_dim), kv_heads = heads.
  int64_t kv_lora_rank = 0;       // the compressed key/value latent; 0 = no MLA
  int64_t q_lora_rank = 0;        // the query's low-rank bottleneck; 0 = a direct q projection
  int64_t rope_head_dim = 0;      // the rotary part of each q/k head; k's is one, shared by the heads
  int64_t v_head_dim = 0;         // the value head size; 0 = head_size()
  // MoE extras: shared experts beside the routed ones, dense layers before the MoE ones.
  int64_t shared_ffn = 0;         // all shared experts' intermediate size together; 0 = none
  bool shared_expert_gate = false;  // a sigmoid gate (h x 1) scales the shared expert (Qwen2-MoE)
  int64_t dense_layers = 0;       // the first layers keep a dense MLP of ffn (DeepSeek first_k_dense_replace)
  int64_t head_size() const { return head_dim > 0 ? head_dim : hidden / heads; }
  int64_t value_head_size() const { return v_head_dim > 0 ? v_head_dim : head_size(); }
  // Layers with routed experts (the others are dense).
  int64_t moe_layers() const { return experts > 0 ? layers - std::min(dense_layers, layers) : 0; }
};

// GPUs per node when a request does not say, as trainfit.conf's default: the 8-GPU
// baseboard of HGX/DGX H100, H200, B200, A100 and MI300X servers. One rule on every face.
constexpr int64_t kDefaultGpusPerNode = 8;

struct Config {
  Geometry geo;
  std::string model_name;   // catalog name or "" for a custom geometry
  std::string model_label;  // a custom geometry's name (model_label; an HF config's), else ""
  // Step shape
  int64_t num_gpus = 1;
  int64_t micro_batch = 1;
  int64_t seq_length = 4096;
  int64_t num_microbatches = 1;  // micro-batches per step (gradient accumulation / pipeline)
  // Numerics
  Precision precision = Precision::kBf16Amp;
  std::string precision_label;  // the framework's word as it means it ("" = to_string(precision))
  Optimizer optimizer = Optimizer::kAdamW;
  OptimizerImpl optimizer_impl = OptimizerImpl::kForeach;
  bool fp32_grads = false;
  Framework framework = Framework::kGeneric;
  std::string framework_version;  // the release whose conventions apply ("" = generic)
  // Activations
  Recompute recompute = Recompute::kNone;
  int64_t recompute_every = 1;   // the recompute mode applies to one layer in N (others keep all)
  bool held_logits = false;      // the loop keeps the model output (fp32 logits) through backward
  bool use_reentrant = true;     // checkpointing runs the forward under no_grad (torch.utils.checkpoint's default)
  bool autocast_cache = true;    // torch.autocast caches weight casts until its region exits (cache_enabled)
  bool compile = false;          // torch.compile: fused elementwise chains save less
  bool compile_loss = false;     // ... and the loss compiled too (a fused cross-entropy)
  Attention attention = Attention::kFlash;
  Ops ops = Ops::kEager;
  bool logits_fp32 = false;
  Loss loss = Loss::kStandard;
  LogitsUpcast logits_upcast = LogitsUpcast::kInLoss;
  bool logits_shift_copy = true;  // the loss copies the shifted logits (HF < 4.49, eager ops)
  // MoE experts run one after another in a Python loop, each added back with index_add_
  // (transformers' MixtralSparseMoeBlock): index_add_ saves each weighted expert output, and
  // backward holds one expert's gradients at a time.
  bool moe_expert_loop = false;
  bool ddp_full_buckets = false;  // PyTorch DDP: gradient buckets as large as the gradients
  // Adapters
  Adapter adapter = Adapter::kNone;
  int64_t lora_rank = 0;
  uint32_t lora_modules = kLoraQ | kLoraV;  // LoraModule bits
  double lora_dropout = 0;
  double adapter_bytes = 4;      // bytes per adapter weight (PEFT keeps them fp32)
  BaseDtype base_dtype = BaseDtype::kFollow;
  bool adapter_autocast = false;  // a 16-bit base under torch.autocast: adapter matmuls run in 16-bit
  bool dora = false;              // DoRA: magnitude vectors, and each target's base output saved
  uint32_t modules_to_save = 0;   // kLoraEmbedding | kLoraLmHead trained in full (PEFT modules_to_save)
  bool kbit_fp32_rest = false;    // QLoRA: the unquantized parameters in fp32 (prepare_model_for_kbit_training)
  std::string bitsandbytes_version;  // the release running an NF4 base ("" when bitsandbytes runs none)
  bool nf4_saves_input = false;   // bitsandbytes' MatMul4Bit saves each linear's input (releases < 0.43.2)
  // Parallelism
  int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1;
  bool sp = false;
  Sharding sharding = Sharding::kZero;
  int fsdp_version = 2;  // 1: FullyShardedDataParallel, 2: fully_shard
  bool fsdp_mixed_precision = true;  // FSDP gathers 16-bit parameters (MixedPrecision param_dtype)
  FrozenUnitGrads frozen_unit_grads = FrozenUnitGrads::kNone;  // FSDP1 units mixing frozen and trainable
  // FSDP1 reshards a frozen unit from a hook on its inputs; when a reentrant checkpoint wraps
  // the unit (HF's gradient checkpointing over PEFT's wrap policy) those inputs are the
  // checkpoint's detached leaves, which the hook keeps alive with their gradients until the
  // end of backward.
  bool held_layer_inputs = false;
  // DeepSpeed ZeRO's gradient bucket, in elements (zero/config.py reduce_bucket_size: 5e8; HF
  // Trainer and accelerate fill "auto" with hidden x hidden).
  double reduce_bucket_elements = 5e8;
  // DeepSpeed ZeRO-3's gathering knobs, in elements (zero/config.py at v0.16.4, L208-237).
  struct Zero3Knobs {
    double prefetch_bucket = 5e7;         // stage3_prefetch_bucket_size (0: no prefetch)
    double max_live = 1e9;                // stage3_max_live_parameters
    double max_reuse_distance = 1e9;      // stage3_max_reuse_distance
    double persistence_threshold = 1e5;   // stage3_param_persistence_threshold
    bool embedding_outside_window = true;  // with accumulation (all releases but v0.16.0-v0.16.7)
  } zero3;
  int zero_stage = 0;
  // min_gpus_to_fit counts whole nodes beyond one. Resolve sets it (kDefaultGpusPerNode
  // when the request does not say); 0 only in Configs built by hand: no node rounding.
  int64_t gpus_per_node = 0;
  bool gpus_per_node_assumed = false;  // the default, not the request's
  // The largest job min_gpus_to_fit answers; beyond, "none" with the change that fits. Default:
  // 16,384 GPUs, the largest published training job (Llama 3 405B on 16K H100s, arXiv:2407.21783
  // section 3.3); the gate passes the partition's own GPU count.
  int64_t max_gpus = 16384;
  // Resolved at one GPU, and the framework's defaults differ beyond one (torchtune,
  // torchtitan and litgpt shard with FSDP only then, presets.cpp defaults_of): GPU counts
  // above one are those of the request resolved at two (min_gpus_for), not this config's.
  bool defaults_vary_with_gpus = false;
  ReportStage report_stage = ReportStage::kCritical;
  // Hardware
  std::string gpu_name;
  GpuArchitecture gpu_architecture = GpuArchitecture::kOther;
  double capacity_bytes = 0;
  FitBound fit_bound = FitBound::kPoint;
  bool offload_optimizer = false;
  bool offload_params = false;
  bool runtime_overhead = true;
  int64_t rising_lengths = 1;  // distinct step lengths, rising to seq_length (1: every step alike)
  BatchLengths batch_lengths = BatchLengths::kFixed;
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF expandable_segments:True

  int64_t model_parallel() const { return tp * pp * cp; }
  int64_t data_parallel() const { return num_gpus / (tp * pp * cp); }
};

struct Resolved {
  Config config;
  std::vector<std::string> assumptions;  // defaults filled in, in words
};

TRAINFIT_API Result<Resolved> resolve(const Request& request);
// The same into `*out`, a default-constructed Resolved (what it holds is unspecified after an
// error): a caller that keeps the result in a larger object (a Response) resolves in place,
// with no second Resolved on its thread's stack.
TRAINFIT_API Result<bool> resolve_into(const Request& request, Resolved* out);

// Checks the divisibility rules that depend on num_gpus / seq_length, which
// min-GPU search and sweeps vary; the error's field is num_gpus or seq_length.
TRAINFIT_API Result<bool> check_layout(const Config& config);

// The model as the output names it: the catalog name, the custom geometry's label, else
// "custom model (L layers, hidden H)".
TRAINFIT_API std::string model_text(const Config& config);
TRAINFIT_API const char* to_string(Precision value);
// The precision as the user asked for it: the framework's word in words, else to_string().
TRAINFIT_API std::string precision_text(const Config& config);

// The parallelism a framework offers by itself (presets.cpp's table): advice proposes only these.
struct FrameworkParallelism {
  bool tensor = true;
  bool context = true;
  bool pipeline = true;
};
TRAINFIT_API FrameworkParallelism parallelism_of(Framework framework);
TRAINFIT_API const char* to_string(Optimizer value);
TRAINFIT_API const char* to_string(OptimizerImpl value);
TRAINFIT_API const char* to_string(Recompute value);
TRAINFIT_API const char* to_string(Framework value);
TRAINFIT_API const char* to_string(Adapter value);
TRAINFIT_API const char* to_string(BaseDtype value);
// "q,k,v" / "q+v" / PEFT module names / a shorthand -> LoraModule bits; errors name the field.
TRAINFIT_API Result<uint32_t> parse_lora_modules(const std::string& text, const char* field);
// The bits as text: a shorthand where one matches, else the modules joined by '+'.
TRAINFIT_API std::string lora_modules_name(uint32_t modules);
TRAINFIT_API const char* to_string(Attention value);
TRAINFIT_API const char* to_string(Ops value);
TRAINFIT_API const char* to_string(Loss value);
TRAINFIT_API const char* to_string(Sharding value);
TRAINFIT_API const char* to_string(FrozenUnitGrads value);
TRAINFIT_API const char* to_string(Mlp value);
TRAINFIT_API const char* to_string(Norm value);
TRAINFIT_API const char* to_string(FitBound value);

}  // namespace trainfit
