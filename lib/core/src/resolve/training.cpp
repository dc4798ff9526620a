// Resolve step 2: the training step — its shape, numerics, what is saved for
// backward, and parameter-efficient adapters.
#include "choices.h"
#include "enum_names.h"
#include "release.h"
#include "steps.h"

namespace trainfit::resolving {
namespace {

constexpr Choice<bool> kNf4Kernels[] = {{"bitsandbytes", false}, {"torchao", true}};  // true: torchao
constexpr Choice<double> kLoraDtypes[] = {{"fp32", 4.0}, {"bf16", 2.0}, {"fp16", 2.0}};

// The newest bitsandbytes release read (its 4-bit matmul unchanged since 0.43.2).
constexpr const char* kNewestBitsandbytes = "0.49.2";

// bitsandbytes MatMul4Bit.forward (bitsandbytes/autograd/_functions.py) keeps the linear's input
// for backward up to 0.43.1 (ctx.tensors = (A, B)); from 0.43.2 only the weight ((None, B),
// PR #1270): backward needs only dX = dY·W^T.
Result<bool> resolve_bitsandbytes(const Request& r, Config& c, Notes& notes) {
  const std::string version = r.bitsandbytes_version ? *r.bitsandbytes_version : kNewestBitsandbytes;
  int release[3];
  if (!parse_release(version, release)) {
    return invalid("bitsandbytes_version", "'" + version + "'", "a release number such as 0.43.1");
  }
  c.bitsandbytes_version = version;
  const bool saves = before(release, 0, 43, 2);
  c.nf4_saves_input = r.nf4_saves_input.value_or(saves);
  if (!r.bitsandbytes_version && !r.nf4_saves_input) {
    notes.push_back(std::string("bitsandbytes_version=") + version +
                    " (the newest modelled: its 4-bit matmul saves no linear's input, as from 0.43.2)");
  }
  return true;
}

Result<bool> resolve_step_shape(const Request& r, Config& c, Notes& notes) {
  Error e;
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

  return true;
}

Result<bool> resolve_numerics(const Request& r, Config& c, Notes& notes) {
  Error e;
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

  return true;
}

Result<bool> resolve_activations(const Request& r, Config& c, Notes& notes) {
  Error e;
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
  if (r.held_logits) c.held_logits = *r.held_logits;
  if (r.autocast_cache) c.autocast_cache = *r.autocast_cache;
  if (r.use_reentrant) c.use_reentrant = *r.use_reentrant;
  constexpr Choice<LogitsUpcast> kUpcasts[] = {{"loss", LogitsUpcast::kInLoss}, {"forward", LogitsUpcast::kInForward}};
  if (!take_enum(r.logits_upcast, "logits_upcast", kUpcasts, &c.logits_upcast, &e)) return e;
  // HF's ForCausalLMLoss shifted the logits with a contiguous copy before 4.49; torchtune and
  // torchtitan shift the labels instead (torchtune recipes; torchtitan's dataloader).
  c.logits_shift_copy = c.ops == Ops::kEager && c.framework != Framework::kTorchtune &&
                        c.framework != Framework::kTorchtitan;
  if (r.logits_shift_copy) c.logits_shift_copy = *r.logits_shift_copy;
  // transformers runs MoE experts in a loop over the experts (modeling_mixtral.py
  // MixtralSparseMoeBlock.forward, 4.x); Megatron, torchtitan and DeepSpeed-MoE group them.
  c.moe_expert_loop = r.moe_expert_loop ? *r.moe_expert_loop : c.framework == Framework::kHf;
  // Plain PyTorch DDP is what HF Trainer/accelerate, Lightning and a hand-written loop use
  // without ZeRO or FSDP; Megatron, DeepSpeed, torchtitan and torchtune bring their own.
  c.ddp_full_buckets = c.framework == Framework::kHf || c.framework == Framework::kLitgpt ||
                       c.framework == Framework::kGeneric || c.framework == Framework::kCustom;
  if (r.ddp_full_buckets) c.ddp_full_buckets = *r.ddp_full_buckets;
  if (r.framework_version) c.framework_version = *r.framework_version;
  if (r.compile) c.compile = *r.compile;
  c.compile_loss = r.compile_loss ? *r.compile_loss : c.compile;
  if (!take_int(r.recompute_every, "recompute_every", 1, 100000, &c.recompute_every, &e)) return e;
  if (r.recompute_every && *r.recompute_every > 1) {
    if (!r.recompute && !r.grad_ckpt) c.recompute = Recompute::kFull;  // "checkpoint one layer in N" means full
    if (c.recompute == Recompute::kNone) {
      return make_error(ErrorCode::kInconsistent, "recompute_every",
                        "recompute_every=" + std::to_string(*r.recompute_every) +
                            " contradicts recompute='none'; give recompute=full|op|selective or drop recompute_every");
    }
  }

  return true;
}

// LoRA / QLoRA: rank 8 and q+v targets are PEFT's, torchtune's and LitGPT's defaults
// (peft tuners/lora/config.py; torchtune _model_builders.py; litgpt finetune/lora.py).
Result<bool> resolve_adapter(const Request& r, Config& c, Notes& notes) {
  Error e;
  if (!take_enum(r.adapter, "adapter", kAdapters, &c.adapter, &e)) return e;
  if (c.adapter == Adapter::kNone) {
    const char* stray = r.lora_rank ? "lora_rank" : r.lora_targets ? "lora_targets" : r.lora_dropout ? "lora_dropout"
                        : r.base_dtype ? "base_dtype" : r.lora_dtype ? "lora_dtype" : r.dora ? "dora"
                        : r.modules_to_save ? "modules_to_save" : r.kbit_fp32_rest ? "kbit_fp32_rest"
                        : r.nf4_kernel ? "nf4_kernel" : nullptr;
    if (stray != nullptr) {
      return make_error(ErrorCode::kInconsistent, stray,
                        std::string(stray) + " is given but adapter is not lora|qlora; set adapter=lora (or qlora)");
    }
    return true;
  }
  c.lora_rank = 8;
  if (!take_int(r.lora_rank, "lora_rank", 1, 65536, &c.lora_rank, &e) ||
      !take_enum(r.base_dtype, "base_dtype", kBaseDtypes, &c.base_dtype, &e)) {
    return e;
  }
  if (r.lora_targets) {
    Result<uint32_t> modules = parse_lora_modules(*r.lora_targets, "lora_targets");
    if (!modules) return modules.error();
    c.lora_modules = *modules;
  }
  if (r.modules_to_save) {
    Result<uint32_t> modules = parse_lora_modules(*r.modules_to_save, "modules_to_save");
    if (!modules) return modules.error();
    if ((*modules & ~(kLoraEmbedding | kLoraLmHead)) != 0) {
      return invalid("modules_to_save", "'" + *r.modules_to_save + "'", "embedding, lm_head or both");
    }
    c.modules_to_save = *modules;
  }
  if (r.dora) c.dora = *r.dora;
  // PEFT's prepare_model_for_kbit_training (peft/utils/other.py) casts every 16-bit parameter
  // that is not 4-bit to fp32; HF's QLoRA recipes call it, except TRL for sharded (FSDP) QLoRA,
  // whose flat parameters must keep one dtype (trl sft_trainer.py: not is_sharded_qlora).
  c.kbit_fp32_rest = c.adapter == Adapter::kQlora && c.framework == Framework::kHf && !r.sharding && !r.zero_stage;
  if (r.kbit_fp32_rest) {
    if (*r.kbit_fp32_rest && c.adapter != Adapter::kQlora) {
      return make_error(ErrorCode::kInconsistent, "kbit_fp32_rest", "kbit_fp32_rest=true applies to a 4-bit base: set adapter=qlora");
    }
    c.kbit_fp32_rest = *r.kbit_fp32_rest;
  }
  // Who runs an NF4 base: bitsandbytes, or torchao's LinearNF4 (torchtune's QLoRA), which saves
  // only the NF4 weight (torchao/dtypes/nf4tensor.py).
  bool bitsandbytes = c.framework != Framework::kTorchtune;
  if (r.nf4_kernel) {
    bool torchao = false;
    if (!take_enum(r.nf4_kernel, "nf4_kernel", kNf4Kernels, &torchao, &e)) return e;
    bitsandbytes = !torchao;
  }
  if (r.lora_dropout) {
    if (!(*r.lora_dropout >= 0.0 && *r.lora_dropout < 1.0)) {
      return invalid("lora_dropout", num(*r.lora_dropout), "number from 0 to below 1");
    }
    c.lora_dropout = *r.lora_dropout;
  }
  if (!r.lora_rank) notes.push_back("lora_rank=8 (PEFT, torchtune and LitGPT default)");
  if (!r.lora_targets) notes.push_back("lora_targets=qv (q and v projections: PEFT and LitGPT default)");
  // The base: QLoRA's is NF4 (bitsandbytes Params4bit); a 16-bit base under autocast computes
  // in 16-bit (nothing frozen is fp32), the adapters' matmuls under autocast too.
  if (c.adapter == Adapter::kQlora && c.base_dtype == BaseDtype::kFollow) c.base_dtype = BaseDtype::kNf4;
  if (bitsandbytes && c.base_dtype == BaseDtype::kNf4) {
    Result<bool> saves = resolve_bitsandbytes(r, c, notes);
    if (!saves) return saves;
  } else if (r.nf4_saves_input && *r.nf4_saves_input) {
    return make_error(ErrorCode::kInconsistent, "nf4_saves_input",
                      "nf4_saves_input=true applies to an NF4 base run by bitsandbytes: set adapter=qlora (nf4_kernel=bitsandbytes)");
  }
  if (c.adapter == Adapter::kQlora && c.base_dtype != BaseDtype::kNf4) {
    return make_error(ErrorCode::kInconsistent, "base_dtype",
                      std::string("base_dtype=") + to_string(c.base_dtype) +
                          " contradicts adapter=qlora (an NF4 base); use adapter=lora with base_dtype=" + to_string(c.base_dtype));
  }
  const bool fp32_params = c.precision == Precision::kFp32 || c.precision == Precision::kBf16Amp;
  const bool low_precision_base = c.base_dtype != BaseDtype::kFollow && c.base_dtype != BaseDtype::kFp32;
  if (c.precision == Precision::kBf16Amp && low_precision_base) {
    c.precision = Precision::kBf16;
    c.adapter_autocast = true;
    notes.push_back(std::string("base_dtype=") + to_string(c.base_dtype) +
                    " under autocast: the frozen layers compute in 16-bit (no fp32 copy to cast), the adapters' "
                    "matmuls under autocast");
  }
  if (c.base_dtype == BaseDtype::kFp32 && !fp32_params) {
    return make_error(ErrorCode::kInconsistent, "base_dtype",
                      std::string("base_dtype=fp32 with precision=") + to_string(c.precision) +
                          " (16-bit parameters); an fp32 base computes in fp32 or under autocast (bf16-amp)");
  }
  // PEFT casts adapters to fp32 (get_peft_model autocast_adapter_dtype=True, tuners_utils.py
  // _cast_adapter_dtype); torchtune and LitGPT build them in the model's dtype.
  c.adapter_bytes = c.framework == Framework::kHf || fp32_params ? 4.0 : 2.0;
  if (!take_enum(r.lora_dtype, "lora_dtype", kLoraDtypes, &c.adapter_bytes, &e)) return e;
  if (c.adapter == Adapter::kQlora && c.precision == Precision::kFp32) {
    return make_error(ErrorCode::kInconsistent, "adapter",
                      "adapter=qlora computes in 16-bit (bitsandbytes 4-bit weights are dequantized to bf16); "
                      "precision=fp32 contradicts it");
  }
  return true;
}

}  // namespace

Result<bool> resolve_training(const Request& r, Config* c, Notes* notes) {
  for (auto step : {resolve_step_shape, resolve_numerics, resolve_activations, resolve_adapter}) {
    Result<bool> done = step(r, *c, *notes);
    if (!done) return done;
  }
  return true;
}

}  // namespace trainfit::resolving
