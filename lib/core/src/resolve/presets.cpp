// Framework presets: the request in the user's framework's words, rewritten into
// trainfit's, with the defaults that framework really uses where the request is silent.
// Explicit fields always win; every filled value is noted with where the framework
// defines it (read at these tags: torchtitan v0.2.1, Megatron-LM
// core_v0.15.0, torchtune v0.6.1, transformers/accelerate v1.10.0, DeepSpeed v0.16.4,
// LitGPT v0.5.12, PEFT v0.18.0).
#include <algorithm>
#include <cstring>

#include "choices.h"
#include "enum_names.h"
#include "release.h"
#include "steps.h"

namespace trainfit::resolving {
namespace {


// One word of a framework and what it means in trainfit's fields.
struct Meaning {
  const char* word;
  const char* precision;           // trainfit's precision
  std::optional<bool> fp32_grads;  // set when the word decides the gradient dtype
  const char* source;
  const char* shown;  // the regime in words, as the framework means the word (shown to the user)
};

// What `precision: <word>` means in each framework.
const std::vector<Meaning>& precision_words(Framework f) {
  static const std::vector<Meaning> generic = {
      {"bf16-mixed", "bf16-amp", std::nullopt, "Lightning's name for autocast over fp32 parameters", "bf16 mixed (autocast over fp32 weights)"},
      {"bf16-true", "bf16", std::nullopt, "Lightning's name for a pure-bf16 model", "bf16 (pure bf16)"},
      {"fp16", "fp16-amp", std::nullopt, "16-bit weights and grads with an fp32 master (ZeRO paper)", "fp16 mixed (fp16 weights, fp32 master)"},
      // Lightning's other words (lightning/fabric/plugins/precision/precision.py, 2.x: _PRECISION_INPUT_STR).
      {"16-mixed", "bf16-amp", std::nullopt, "Lightning MixedPrecision('16-mixed'): fp16 autocast over fp32 parameters", "fp16 mixed (autocast over fp32 weights)"},
      {"16-true", "bf16", std::nullopt, "Lightning HalfPrecision('16-true'): whole model fp16", "fp16 (pure fp16)"},
      {"32-true", "fp32", std::nullopt, "Lightning: fp32", "fp32"},
  };
  static const std::vector<Meaning> hf = {
      {"bf16", "bf16-amp", std::nullopt, "accelerate prepare_model: torch.autocast(bf16) over fp32 parameters", "bf16 mixed (autocast over fp32 weights)"},
      {"fp16", "bf16-amp", std::nullopt, "accelerate: torch.autocast(fp16) + GradScaler over fp32 parameters", "fp16 mixed (autocast over fp32 weights)"},
  };
  static const std::vector<Meaning> deepspeed = {
      // ZeRO 1-3 keep bf16 grads; without ZeRO the BF16_Optimizer accumulates fp32 grads
      // (engine.py get_data_types; runtime/bf16_optimizer.py) — decided in apply_framework.
      {"bf16", "fp16-amp", std::nullopt, "engine.py: module.bfloat16() + fp32 master partition (stage_1_and_2.py)", "bf16 mixed (bf16 weights, fp32 master)"},
      {"fp16", "fp16-amp", false, "engine.py: module.half() + fp32 master + loss scaler", "fp16 mixed (fp16 weights, fp32 master, loss scaling)"},
  };
  static const std::vector<Meaning> megatron = {
      {"bf16", "fp16-amp", true,
       "arguments.py validate_args: --bf16 sets accumulate_allreduce_grads_in_fp32 (fp32 main_grad buffer); "
       "optimizer.py Float16OptimizerWithFloat16Params: fp32 main params", "bf16 mixed (bf16 weights, fp32 master and grads)"},
      {"fp16", "fp16-amp", false, "optimizer.py: fp16 params + fp32 main params, fp16 grad buffer", "fp16 mixed (fp16 weights, fp32 master)"},
      {"fp8", "fp8", true, "Transformer Engine fp8 GEMMs over --bf16 params (fp32 main_grad)", "fp8 (Transformer Engine over bf16 weights, fp32 master)"},
  };
  static const std::vector<Meaning> torchtune = {
      {"bf16", "bf16", std::nullopt,
       "full_finetune_distributed.py _setup_model: built under set_default_dtype(bf16): bf16 params, grads and "
       "optimizer states, no master", "bf16 (pure bf16: weights, grads, optimizer states)"},
  };
  static const std::vector<Meaning> torchtitan = {
      {"bf16", "bf16-amp", std::nullopt,
       "job_config.py Training.mixed_precision_param=bfloat16: FSDP2 MixedPrecisionPolicy over fp32 sharded params", "bf16 mixed (FSDP2 bf16 over fp32 weights)"},
      {"bf16-true", "bf16", std::nullopt, "job_config.py Training.dtype=bfloat16: everything bf16, no fp32 copy", "bf16 (pure bf16)"},
      {"bf16-mixed", "bf16-amp", std::nullopt,
       "job_config.py Training.dtype=float32 + mixed_precision_param=bfloat16 (the default)", "bf16 mixed (FSDP2 bf16 over fp32 weights)"},
      // Float8 is a converter over the same FSDP2 policy; Float8Linear saves its bf16
      // input and re-casts in backward (torchao float8/float8_linear.py).
      {"fp8", "bf16-amp", std::nullopt, "quantize.linear.float8: torchao Float8Linear over FSDP2 mixed precision", "fp8 (Float8Linear over bf16 mixed)"},
  };
  static const std::vector<Meaning> litgpt = {
      {"bf16", "bf16-amp", std::nullopt, "Lightning: 'bf16' is bf16-mixed (autocast over fp32 parameters)", "bf16 mixed (autocast over fp32 weights)"},
      {"bf16-mixed", "bf16-amp", std::nullopt, "Lightning MixedPrecision: autocast over fp32 parameters", "bf16 mixed (autocast over fp32 weights)"},
      {"bf16-true", "bf16", std::nullopt, "lightning/fabric/plugins/precision/half.py HalfPrecision: whole model bf16", "bf16 (pure bf16)"},
      {"32-true", "fp32", std::nullopt, "Lightning: fp32", "fp32"},
      // precision.py _PRECISION_INPUT_STR_ALIAS_CONVERSION: "16" -> "16-mixed", "32" -> "32-true".
      {"16-mixed", "bf16-amp", std::nullopt, "Lightning MixedPrecision('16-mixed'): fp16 autocast over fp32 parameters + GradScaler", "fp16 mixed (autocast over fp32 weights)"},
      {"16", "bf16-amp", std::nullopt, "Lightning: '16' is 16-mixed (precision.py _PRECISION_INPUT_STR_ALIAS_CONVERSION)", "fp16 mixed (autocast over fp32 weights)"},
      {"16-true", "bf16", std::nullopt, "lightning/fabric/plugins/precision/half.py HalfPrecision: whole model fp16", "fp16 (pure fp16)"},
      {"32", "fp32", std::nullopt, "Lightning: '32' is 32-true (precision.py _PRECISION_INPUT_STR_ALIAS_CONVERSION)", "fp32"},
  };
  switch (f) {
    case Framework::kHf: return hf;
    case Framework::kDeepSpeed: return deepspeed;
    case Framework::kMegatron: return megatron;
    case Framework::kTorchtune: return torchtune;
    case Framework::kTorchtitan: return torchtitan;
    case Framework::kLitgpt: return litgpt;
    case Framework::kGeneric:
    case Framework::kCustom: break;
  }
  return generic;
}

// A default the framework uses when the request is silent: field=value, and where.
struct Default {
  const char* field;
  const char* value;
  const char* source;
};

// multi_gpu: the job has more than one GPU (the request's num_gpus, or asked beyond it).
std::vector<Default> defaults_of(Framework f, const Request& r, bool multi_gpu) {
  const bool adapter = r.adapter && lower(*r.adapter) != "none";
  std::vector<Default> out;
  switch (f) {
    case Framework::kGeneric:
      break;
    case Framework::kCustom:
      out.push_back({"held_logits", "true", "a hand-written loop keeps the model output until the step ends"});
      break;
    case Framework::kHf:
      out.push_back({"precision", "bf16", "the common --bf16 (TrainingArguments)"});
      out.push_back({"optimizer_impl", "foreach", "adamw_torch: torch.optim.AdamW, foreach on CUDA (torch optimizer.py)"});
      out.push_back({"logits_fp32", "true", "loss_utils.py ForCausalLMLoss: logits.float()"});
      break;
    case Framework::kDeepSpeed:
      out.push_back({"precision", "bf16", "bf16.enabled (the common setting)"});
      out.push_back({"optimizer_impl", "fused", "DeepSpeed FusedAdam (ops/adam/fused_adam.py)"});
      out.push_back({"logits_fp32", "true", "HF models under DeepSpeed: ForCausalLMLoss logits.float()"});
      break;
    case Framework::kMegatron:
      out.push_back({"precision", "bf16", "--bf16 (the common setting)"});
      out.push_back({"ops", "fused", "Transformer Engine layers (fused norms, fused softmax, fused SwiGLU)"});
      out.push_back({"optimizer_impl", "fused", "core/optimizer/__init__.py: TE/apex FusedAdam"});
      out.push_back({"logits_fp32", "true", "tensor_parallel/cross_entropy.py: vocab-parallel CE on logits.float()"});
      break;
    case Framework::kTorchtune:
      out.push_back({"precision", "bf16", "recipes/configs/*: dtype: bf16"});
      out.push_back({"optimizer_impl", "fused", "recipes/configs/llama3_1/8B_full.yaml: torch.optim.AdamW fused: True"});
      out.push_back({"loss", "chunked", "modules/loss/ce_chunked_output_loss.py CEWithChunkedOutputLoss(num_output_chunks=8)"});
      if (!r.loss || lower(*r.loss) == "chunked") {
        out.push_back({"logits_fp32", "true", "CEWithChunkedOutputLoss: each chunk .float()"});
      } else if (r.compile && *r.compile) {
        // The recipes call training.compile_loss(self._loss_fn) and drop what it returns: only
        // the chunked loss is compiled, in place (compute_cross_entropy); any other runs eagerly.
        out.push_back({"compile_loss", "false",
                       "recipes/*_finetune_*.py v0.3.0-v0.6.1: compile_loss's result discarded, a loss other than "
                       "CEWithChunkedOutputLoss stays eager (training/_compile.py)"});
      }
      out.push_back({"recompute", "full", "recipes/configs/*: enable_activation_checkpointing: True (training/memory.py)"});
      out.push_back({"use_reentrant", "false", "training/_activation_checkpointing.py: torch's checkpoint_wrapper, NO_REENTRANT"});
      if (multi_gpu) out.push_back({"sharding", "fsdp-full", "training/_distributed.py shard_model: FSDP2 fully_shard"});
      if (adapter) out.push_back({"lora_targets", "all-linear", "llama3_1 8B LoRA configs: q_proj, v_proj, output_proj + MLP"});
      break;
    case Framework::kTorchtitan:
      out.push_back({"precision", "bf16", "job_config.py Training.mixed_precision_param=bfloat16"});
      out.push_back({"optimizer_impl", "fused", "job_config.py Optimizer.implementation=fused"});
      out.push_back({"logits_fp32", "true", "components/loss.py cross_entropy_loss: pred.float()"});
      out.push_back({"recompute", "full", "job_config.py ActivationCheckpoint: mode selective, option \"2\" (every 2nd block)"});
      if (!r.recompute) out.push_back({"recompute_every", "2", "job_config.py ActivationCheckpoint.selective_ac_option=\"2\""});
      out.push_back({"use_reentrant", "false", "parallelize.py _apply_ac_to_transformer_block: ptd_checkpoint_wrapper, NO_REENTRANT by default"});
      if (multi_gpu) out.push_back({"sharding", "fsdp-full", "job_config.py Parallelism.data_parallel_shard_degree=-1: FSDP2 over all GPUs"});
      break;
    case Framework::kLitgpt:
      out.push_back({"precision", "bf16-mixed", "litgpt/utils.py get_default_supported_precision(training=True)"});
      out.push_back({"optimizer_impl", "foreach", "torch.optim.AdamW (foreach on CUDA)"});
      out.push_back({"loss", "chunked", "litgpt/utils.py chunked_cross_entropy(chunk_size=128), no upcast"});
      out.push_back({"use_reentrant", "false", "Lightning's activation_checkpointing_policy: torch's checkpoint_wrapper, NO_REENTRANT"});
      if (adapter) out.push_back({"lora_dropout", "0.05", "finetune/lora.py setup: lora_dropout=0.05"});
      if (multi_gpu) {
        out.push_back({"sharding", "fsdp-full", "finetune/full.py: FSDPStrategy(auto_wrap_policy={Block})"});
        out.push_back({"recompute", "full", "finetune/full.py: activation_checkpointing_policy={Block}"});
      }
      break;
  }
  return out;
}

// The newest release of each framework whose conventions are modelled (the default).
const char* newest_release(Framework f) {
  switch (f) {
    case Framework::kHf: return "5.17";  // transformers, measured on an H200 (tests/fidelity/gpu)
    case Framework::kTorchtitan: return "0.2.2";  // its defaults read at v0.1.0, v0.2.0, v0.2.1, v0.2.2
    // Megatron core_v0.10.0-core_v0.19.0 and torchtune v0.4.0-v0.6.1: the defaults modelled
    // read unchanged at every tag (docs/frameworks.md "Releases modelled").
    case Framework::kMegatron: return "0.19.0";
    case Framework::kTorchtune: return "0.6.1";
    case Framework::kDeepSpeed: return "0.19.5";
    case Framework::kLitgpt: return "0.5.13";
    case Framework::kGeneric:
    case Framework::kCustom: break;
  }
  return "";
}

// What changed between releases, as defaults of the fields that say it.
std::vector<Default> release_defaults(Framework f, const int release[3], const Request& r, bool multi_gpu) {
  std::vector<Default> out;
  const bool adapter = r.adapter && lower(*r.adapter) == "lora";
  if (f == Framework::kTorchtitan && before(release, 0, 1) && r.compile && *r.compile) {
    // No release tag before v0.1.0: this is a checkout, e.g. the December 2024 benchmarks'.
    out.push_back({"compile_loss", "false",
                   "torchtitan before PR #1033 (2025-04-02): apply_compile wrapped the TransformerBlocks, the loss ran eagerly"});
  }
  if (f == Framework::kLitgpt && multi_gpu && adapter) {
    if (before(release, 0, 5, 11)) {
      out.push_back({"fsdp_version", "1", "litgpt < 0.5.11 finetune/lora.py: Lightning FSDPStrategy (FullyShardedDataParallel)"});
      if (before(release, 0, 5, 8)) {
        // One unit per Block holds its frozen weights and its LoRA factors; Lightning's
        // FSDPStrategy sets use_orig_params=True (fabric/strategies/fsdp.py); accumulation runs
        // under fabric.no_backward_sync, FSDP's no_sync.
        const bool accumulates = r.num_microbatches.value_or(1) > 1;
        out.push_back({"frozen_unit_grads", accumulates ? "full" : "sharded",
                       accumulates ? "litgpt < 0.5.8 finetune/lora.py: auto_wrap_policy={Block}, use_orig_params=True, "
                                     "accumulation under no_backward_sync: the frozen weights' gradients unsharded"
                                   : "litgpt < 0.5.8 finetune/lora.py: auto_wrap_policy={Block}, use_orig_params=True: "
                                     "the frozen weights get sharded gradients"});
      } else {
        out.push_back({"frozen_unit_grads", "none",
                       "litgpt 0.5.8 finetune/lora.py (PR #1538): auto_wrap_policy={torch.nn.Linear}, frozen linears in units of their own"});
      }
    } else {
      out.push_back({"fsdp_version", "2", "litgpt >= 0.5.11 finetune/lora.py: ModelParallelStrategy, fully_shard per Block"});
      out.push_back({"fsdp_mixed_precision", "false",
                     "litgpt >= 0.5.11 finetune/lora.py parallelize_fn: fully_shard without a MixedPrecisionPolicy"});
    }
  }
  if (f == Framework::kHf) {
    if (before(release, 4, 46)) {
      out.push_back({"logits_upcast", "forward", "transformers < 4.46 modeling_llama.py LlamaForCausalLM.forward: logits.float()"});
    } else {
      out.push_back({"logits_upcast", "loss", "transformers >= 4.46 loss/loss_utils.py ForCausalLMLoss: logits.float()"});
    }
    if (before(release, 4, 49)) {
      out.push_back({"logits_shift_copy", "true", "ForCausalLMLoss before 4.49: logits[..., :-1, :].contiguous()"});
    } else {
      out.push_back({"logits_shift_copy", "false",
                     "transformers >= 4.49 ForCausalLMLoss: labels padded and shifted, no logits copy (PR #35646)"});
    }
    if (before(release, 5, 0)) {
      out.push_back({"use_reentrant", "true",
                     "transformers < 5.0 modeling_utils.py gradient_checkpointing_enable: kwargs None -> "
                     "{'use_reentrant': True} (4.38-4.57; torch.utils.checkpoint's default True before)"});
    } else {
      out.push_back({"use_reentrant", "false",
                     "transformers >= 5.0 modeling_utils.py gradient_checkpointing_enable: kwargs None -> "
                     "{'use_reentrant': False} (PR #43203)"});
    }
    if (adapter && before(release, 5, 0)) {
      out.push_back({"base_dtype", "fp32", "transformers 4.x from_pretrained: torch_dtype defaults to float32"});
    } else if (adapter) {
      out.push_back({"base_dtype", "bf16",
                     "transformers 5 from_pretrained: dtype defaults to 'auto', the checkpoint's (bf16 for current LLMs)"});
    }
  }
  return out;
}

// DeepSpeed bf16 without ZeRO: before v0.17.6 the BF16_Optimizer accumulated fp32 gradients;
// from v0.17.6 grad_accum_dtype defaults to the model's dtype and FP16_Optimizer runs in bf16
// mode with bf16 gradients (runtime/engine.py get_data_types, PR #7515). ZeRO keeps bf16 grads.
bool deepspeed_bf16_fp32_grads(const int release[3], const Request& r) {
  return r.zero_stage.value_or(0) == 0 && before(release, 0, 17, 6);
}

// Whether a default fills its field: the request leaves it unsaid (legacy seed spellings
// decide precision and recompute themselves) and no earlier default filled it.
bool fills(const Default& d, const Request& in, const std::vector<Default>& earlier) {
  const std::string field = d.field;
  if ((field == "precision" && in.precision_bits) || (field == "recompute" && in.grad_ckpt)) return false;
  for (const Default& e : earlier) if (field == e.field) return false;
  return !field_is_set(in, d.field);
}

// What the defaults set in the request: those that fill, in order.
std::vector<Default> filled(const std::vector<Default>& defaults, const Request& in) {
  std::vector<Default> out;
  for (const Default& d : defaults) if (fills(d, in, out)) out.push_back(d);
  return out;
}

bool same_defaults(const std::vector<Default>& a, const std::vector<Default>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Default& x, const Default& y) {
    return std::strcmp(x.field, y.field) == 0 && std::strcmp(x.value, y.value) == 0;
  });
}

}  // namespace

bool speaks_a_framework(const Request& r) {
  if (r.framework || r.framework_version) return true;
  if (r.recompute && lower(*r.recompute) == "core_attn") return true;
  if (!r.precision) return false;
  const std::string word = lower(*r.precision);
  for (const Meaning& m : precision_words(Framework::kGeneric)) {
    if (word == m.word) return true;  // an alias every framework accepts
  }
  return false;
}

Result<Request> apply_framework(const Request& in, Framework* framework, std::string* precision_shown, Notes* notes,
                                bool* varies) {
  Error e;
  Framework f = Framework::kGeneric;
  if (!take_enum(in.framework, "framework", kFrameworks, &f, &e)) return e;
  *framework = f;
  Request r = in;
  // The release: its conventions fill the fields that say them (the newest modelled if unsaid).
  const bool multi_gpu = in.num_gpus.value_or(1) > 1;
  std::vector<Default> defaults = defaults_of(f, in, multi_gpu);
  int release[3] = {0, 0, 0};
  bool released = false;  // release_defaults apply
  if (in.framework_version || f != Framework::kGeneric) {
    const std::string version = in.framework_version ? *in.framework_version : newest_release(f);
    if (!version.empty() && !parse_release(version, release)) {
      return invalid("framework_version", "'" + version + "'", "a release number such as 4.45 or v0.2.1");
    }
    if (!version.empty()) {
      r.framework_version = version;
      if (!in.framework_version) {
        notes->push_back("framework_version=" + version + " (" + to_string(f) + ": the newest release modelled)");
      }
      for (const Default& d : release_defaults(f, release, in, multi_gpu)) defaults.push_back(d);
      released = true;
    }
  }
  const std::vector<Default> to_fill = filled(defaults, in);
  *varies = false;
  if (!multi_gpu) {  // what the same request would default to on two GPUs (no copy of it)
    std::vector<Default> at_two = defaults_of(f, in, true);
    if (released) for (const Default& d : release_defaults(f, release, in, true)) at_two.push_back(d);
    *varies = !same_defaults(to_fill, filled(at_two, in));
  }
  for (const Default& d : to_fill) {
    Result<bool> set = set_field_from_text(r, d.field, d.value);
    if (!set) return set.error();
    notes->push_back(std::string(d.field) + "=" + d.value + " (" + to_string(f) + " default: " + d.source + ")");
  }
  if (!in.held_logits && f != Framework::kCustom) {
    r.held_logits = false;
    if (f != Framework::kGeneric) {
      notes->push_back(std::string("held_logits=false (") + to_string(f) +
                       ": the loop keeps only the loss; the logits are freed before backward)");
    }
  }
  // The framework's words, in trainfit's.
  if (r.precision) {
    const std::string word = lower(*r.precision);
    std::vector<Meaning> words = precision_words(f);
    for (const Meaning& m : precision_words(Framework::kGeneric)) words.push_back(m);  // aliases everywhere
    for (const Meaning& m : words) {
      if (word != m.word) continue;
      r.precision = m.precision;
      *precision_shown = m.shown;
      std::optional<bool> fp32_grads = m.fp32_grads;
      if (f == Framework::kDeepSpeed && word == "bf16") fp32_grads = deepspeed_bf16_fp32_grads(release, r);
      if (fp32_grads && !r.fp32_grads) r.fp32_grads = *fp32_grads;
      notes->push_back("precision '" + word + "' under " + to_string(f) + " = " + m.shown + ", trainfit's " + m.precision +
                       (fp32_grads ? std::string(*fp32_grads ? " with fp32 grads" : " with 16-bit grads") : "") +
                       " (" + m.source + ")");
      break;
    }
  }
  if (r.recompute && f == Framework::kTorchtitan && lower(*r.recompute) == "selective") {
    r.recompute = "op";  // torchtitan's selective is op-level SAC (activation_checkpoint.py _apply_op_sac)
    notes->push_back("recompute 'selective' under torchtitan = op (op-level selective checkpointing, "
                     "activation_checkpoint.py _apply_op_sac; Megatron's core-attention recompute is 'core_attn')");
  } else if (r.recompute && lower(*r.recompute) == "core_attn") {
    r.recompute = "selective";  // Megatron --recompute-modules core_attn, in any framework's words
  }
  return r;
}

}  // namespace trainfit::resolving

namespace trainfit {
namespace {

// The model parallelism each framework offers by itself, at the tags read above.
struct ParallelismRow {
  Framework framework;
  FrameworkParallelism offers;
  const char* source;
};
constexpr ParallelismRow kParallelism[] = {
    {Framework::kGeneric, {true, true, true}, "trainfit's own words: any layout"},
    {Framework::kCustom, {true, true, true}, "a hand-written loop: any layout"},
    {Framework::kHf, {true, true, false}, "accelerate parallelism_config.py ParallelismConfig: tp_size, cp_size, no pipeline"},
    // Plain DeepSpeed: ZeRO data parallelism and deepspeed/runtime/pipe PipelineModule; tensor
    // and sequence parallelism come from Megatron-DeepSpeed's mpu, not from DeepSpeed itself.
    {Framework::kDeepSpeed, {false, false, true}, "deepspeed/runtime/pipe/module.py PipelineModule; no TP/CP without Megatron"},
    {Framework::kMegatron, {true, true, true}, "arguments.py --tensor/--context/--pipeline-model-parallel-size"},
    {Framework::kTorchtune, {true, false, false}, "recipes/full_finetune_distributed.py tensor_parallel_dim"},
    {Framework::kTorchtitan, {true, true, true}, "job_config.py Parallelism tensor/context/pipeline_parallel_degree"},
    {Framework::kLitgpt, {false, false, false}, "finetune/full.py: FSDPStrategy only"},
};

}  // namespace

FrameworkParallelism parallelism_of(Framework framework) {
  for (const ParallelismRow& row : kParallelism) {
    if (row.framework == framework) return row.offers;
  }
  return {};
}

std::string precision_text(const Config& config) {
  return config.precision_label.empty() ? std::string(to_string(config.precision)) : config.precision_label;
}

}  // namespace trainfit
