// Framework presets, held logits, op-level and every-N recompute, LoRA/QLoRA and the
// measures: each expectation comes from the framework's own definition or a published
// figure, not from trainfit's output.
#include <cmath>

#include <gtest/gtest.h>

#include "test_util.h"
#include "trainfit/config.h"
#include "trainfit/estimate.h"

namespace trainfit::testing {
namespace {

const std::string kLlama8b = "model=llama3-8b,seq_length=4096,micro_batch=1,num_gpus=1,gpu=h200";

// Bytes per parameter by framework word (AdamW, no sharding).
TEST(Frameworks, PrecisionWordsMeanWhatTheFrameworkMeans) {
  // Megatron --bf16: bf16 params 2 + fp32 main_grad 4 + fp32 main params 4 + Adam 8 = 18
  // (Megatron-LM docs/source/api-guide/dist_optimizer.md, "bf16 param, fp32 grads": 18).
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=megatron,precision=bf16").bytes_per_param, 18.0);
  // --grad-reduce-in-bf16 (fp32_grads=false) drops the main_grad to 2 bytes: 16.
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=megatron,precision=bf16,fp32_grads=false").bytes_per_param, 16.0);
  // torchtune dtype bf16: params, grads and both AdamW moments in bf16 = 2+2+4 = 8.
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=torchtune,precision=bf16").bytes_per_param, 8.0);
  // HF --bf16: autocast over fp32 params: 4 + 4 grads + 8 moments = 16 (the bf16 copies
  // are activations).
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=hf,precision=bf16").bytes_per_param, 16.0);
  // DeepSpeed bf16 with ZeRO: bf16 params and grads + fp32 master + Adam = 2+2+4+8 (ZeRO paper K=12);
  // without ZeRO, before v0.17.6, the BF16_Optimizer accumulates fp32 grads: 18.
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=deepspeed,precision=bf16,zero_stage=1").bytes_per_param, 16.0);
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=deepspeed,framework_version=0.17.5,precision=bf16,zero_stage=0").bytes_per_param, 18.0);
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=deepspeed,precision=bf16,zero_stage=0").bytes_per_param, 16.0);
  // LitGPT bf16-true is pure bf16 (8), bf16-mixed autocast over fp32 (16).
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=litgpt,precision=bf16-true").bytes_per_param, 8.0);
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=litgpt,precision=bf16-mixed").bytes_per_param, 16.0);
}

// Every word Lightning accepts for 16- and 32-bit training (lightning/fabric/plugins/precision/
// precision.py, 2.x: _PRECISION_INPUT_STR and the aliases "16" -> "16-mixed", "32" -> "32-true"),
// as written, with the bytes its plugin keeps per parameter: MixedPrecision autocasts over fp32
// parameters (4 + 4 grads + 8 moments = 16), HalfPrecision casts the model (2 + 2 + 4 = 8),
// 32-true is fp32 throughout (16).
TEST(Frameworks, LightningPrecisionWordsAsWritten) {
  for (const char* framework : {"litgpt", "generic"}) {
    const std::string base = kLlama8b + ",framework=" + framework + ",precision=";
    EXPECT_DOUBLE_EQ(estimate_of(base + "16-mixed").bytes_per_param, 16.0) << framework;
    EXPECT_DOUBLE_EQ(estimate_of(base + "16-true").bytes_per_param, 8.0) << framework;
    EXPECT_DOUBLE_EQ(estimate_of(base + "32-true").bytes_per_param, 16.0) << framework;
    // fp16 autocast saves 2-byte activations as bf16 autocast does: the same step.
    EXPECT_DOUBLE_EQ(estimate_of(base + "16-mixed").per_gpu_total, estimate_of(base + "bf16-mixed").per_gpu_total);
  }
  const std::string lit = kLlama8b + ",framework=litgpt,precision=";
  EXPECT_DOUBLE_EQ(estimate_of(lit + "16").per_gpu_total, estimate_of(lit + "16-mixed").per_gpu_total);
  EXPECT_DOUBLE_EQ(estimate_of(lit + "32").per_gpu_total, estimate_of(lit + "32-true").per_gpu_total);
  EXPECT_DOUBLE_EQ(estimate_of(lit + "32").per_gpu_total, estimate_of(kLlama8b + ",precision=fp32").per_gpu_total);
}

// torch.autocast caches the bf16 cast of each fp32 parameter that requires grad until the region
// exits (aten/src/ATen/autocast_mode.cpp cached_cast): checkpointed layers, whose matmuls save no
// weight, still hold every linear weight's cast through the forward. Llama-3-8B's layers: q and o
// 4096x4096, k and v 4096x1024, the MLP 3 x 4096x14336, 32 layers, 2 bytes each. Measured on both
// sides by tests/fidelity (the recompute=full rows under bf16-amp; python3-torch 1.13 caches bf16
// casts on the CPU as well).
TEST(Frameworks, AutocastCachesCheckpointedLayersWeightsThroughTheForward) {
  const double per_layer = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336;
  const std::string ddp = kLlama8b + ",framework=hf,precision=bf16-amp,num_gpus=2,zero_stage=0";
  EXPECT_DOUBLE_EQ(estimate_of(ddp + ",recompute=full").stage.transients.autocast_cache, 2.0 * 32 * per_layer);
  EXPECT_DOUBLE_EQ(estimate_of(ddp + ",recompute=full,recompute_every=2").stage.transients.autocast_cache, 2.0 * 16 * per_layer);
  // Not cached, or already counted: no recompute (the matmuls save the casts), pure bf16 (no cast),
  // ZeRO-3 (the units arrive cast), a frozen base (requires_grad false).
  EXPECT_DOUBLE_EQ(estimate_of(ddp + ",recompute=none").stage.transients.autocast_cache, 0.0);
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",precision=bf16,recompute=full").stage.transients.autocast_cache, 0.0);
  EXPECT_DOUBLE_EQ(estimate_of(kLlama8b + ",framework=hf,precision=bf16-amp,num_gpus=2,zero_stage=3,recompute=full")
                       .stage.transients.autocast_cache, 0.0);
  EXPECT_DOUBLE_EQ(estimate_of(ddp + ",recompute=full,adapter=lora").stage.transients.autocast_cache, 0.0);
  // torch.autocast(cache_enabled=False) caches nothing; the forward peak drops by exactly the cache.
  const Breakdown cached = estimate_of(ddp + ",recompute=full");
  const Breakdown uncached = estimate_of(ddp + ",recompute=full,autocast_cache=false");
  EXPECT_DOUBLE_EQ(uncached.stage.transients.autocast_cache, 0.0);
  EXPECT_DOUBLE_EQ(cached.stage.forward_peak - uncached.stage.forward_peak, 2.0 * 32 * per_layer);
}

TEST(Frameworks, ExplicitFieldsWinOverPresets) {
  const Config c = config_of(kLlama8b + ",framework=torchtune,loss=standard,optimizer_impl=foreach,recompute=none");
  EXPECT_EQ(c.loss, Loss::kStandard);
  EXPECT_EQ(c.optimizer_impl, OptimizerImpl::kForeach);
  EXPECT_EQ(c.recompute, Recompute::kNone);
  const Config defaults = config_of(kLlama8b + ",framework=torchtune");
  EXPECT_EQ(defaults.loss, Loss::kChunked);  // CEWithChunkedOutputLoss in the recipes
  EXPECT_EQ(defaults.optimizer_impl, OptimizerImpl::kFused);
  EXPECT_EQ(defaults.recompute, Recompute::kFull);
}

TEST(Frameworks, TorchtuneCompilesOnlyTheChunkedLoss) {
  // torchtune v0.3.0-v0.6.1 recipes: training.compile_loss(self._loss_fn) with its result
  // dropped; CEWithChunkedOutputLoss is compiled in place, any other loss runs eagerly.
  const std::string spec = kLlama8b + ",framework=torchtune,compile=true";
  EXPECT_FALSE(config_of(spec + ",loss=standard").compile_loss);
  EXPECT_TRUE(config_of(spec).compile_loss);  // the chunked default
  EXPECT_TRUE(config_of(spec + ",loss=chunked").compile_loss);
  EXPECT_TRUE(config_of(spec + ",loss=standard,compile_loss=true").compile_loss);  // a patched recipe
  // The eager loss keeps its fp32 log-softmax and its gradient: more than the compiled one.
  EXPECT_GT(estimate_of(spec + ",loss=standard").stage.transients.loss_backward,
            estimate_of(spec + ",loss=standard,compile_loss=true").stage.transients.loss_backward);
}

TEST(Frameworks, EveryFilledValueIsNotedWithItsSource) {
  Request r;
  ASSERT_TRUE(apply_key_values(r, kLlama8b + ",framework=torchtitan").ok());
  Result<Resolved> resolved = resolve(r);
  ASSERT_TRUE(resolved.ok());
  std::string notes;
  for (const std::string& n : resolved->assumptions) notes += n + "\n";
  for (const char* filled : {"optimizer_impl=fused", "logits_fp32=true", "recompute=full", "recompute_every=2"}) {
    EXPECT_NE(notes.find(filled), std::string::npos) << filled << " missing from\n" << notes;
  }
  EXPECT_NE(notes.find("job_config.py"), std::string::npos) << "sources are named";
}

TEST(Frameworks, TorchtitanSelectiveIsOpLevel) {
  const Config titan = config_of(kLlama8b + ",framework=torchtitan,recompute=selective");
  EXPECT_EQ(titan.recompute, Recompute::kOp);
  const Config megatron = config_of(kLlama8b + ",framework=megatron,recompute=selective");
  EXPECT_EQ(megatron.recompute, Recompute::kSelective);
  // Megatron's word in torchtitan's tongue.
  EXPECT_EQ(config_of(kLlama8b + ",framework=torchtitan,recompute=core_attn").recompute, Recompute::kSelective);
}

TEST(Frameworks, UnknownFrameworkIsOneClearLine) {
  const Error e = error_of(kLlama8b + ",framework=nemo2");
  EXPECT_EQ(e.field, "framework");
  EXPECT_NE(e.message.find("'nemo2'"), std::string::npos);
  EXPECT_NE(e.message.find("torchtitan"), std::string::npos);
}

// Op-level checkpointing keeps the block input, the outputs of wq, wv, w1, w2 and the
// attention output with its fp32 log-sum-exp (torchtitan _op_sac_save_list, every other mm).
TEST(Recompute, OpLevelKeepsTheSavedOpsOutputs) {
  const Config c = config_of("model=llama3-8b,seq_length=4096,micro_batch=1,precision=bf16,recompute=op,ops=fused");
  const double T = 4096, h = 4096, q = 4096, kv = 1024, F = 14336, heads = 32;
  const double expected = 2 * T * h + 2 * T * (q + kv + F + h) + 2 * T * q + 4 * T * heads;
  const Breakdown b = estimate(c);
  EXPECT_NEAR(b.stage.activations.per_layer, expected, 1.0);
}

TEST(Recompute, EveryNCheckpointsOneLayerInN) {
  const std::string base = "model=llama3-8b,seq_length=4096,micro_batch=1,precision=bf16";
  const double none = estimate_of(base + ",recompute=none").stage.activations.per_layer;
  const double full = estimate_of(base + ",recompute=full").stage.activations.per_layer;
  // 32 layers, every 2nd checkpointed: 16 full + 16 none.
  EXPECT_NEAR(estimate_of(base + ",recompute=full,recompute_every=2").stage.activations.per_layer, (none + full) / 2, 1.0);
  // recompute_every alone means full recompute of one layer in N; with none it contradicts.
  EXPECT_EQ(config_of(base + ",recompute_every=4").recompute, Recompute::kFull);
  EXPECT_EQ(error_of(base + ",recompute=none,recompute_every=2").field, "recompute_every");
}

// HF Trainer returns only the loss, so the logits are freed before backward; a loop that keeps
// the output holds the logits as the model returned them: fp32 (b*s*V*4, 3.9 GiB at Llama-3-8B,
// seq 8192) where LlamaForCausalLM.forward upcasts them (transformers < 4.46), 16-bit (b*s*V*2)
// from 4.46, where the upcast is ForCausalLMLoss's own local (src/transformers/loss/loss_utils.py).
TEST(HeldLogits, HoldingTheOutputCostsTheLogitsAsReturned) {
  const std::string base = "model=llama3-8b,seq_length=8192,micro_batch=1,num_gpus=8,zero_stage=3,framework=hf";
  const Breakdown dropped = estimate_of(base + ",held_logits=false");
  const Breakdown held = estimate_of(base + ",held_logits=true");
  EXPECT_DOUBLE_EQ(held.stage.transients.held_logits, 2.0 * 8192 * 128256);
  EXPECT_DOUBLE_EQ(estimate_of(base + ",framework_version=4.45,held_logits=true").stage.transients.held_logits,
                   4.0 * 8192 * 128256);
  EXPECT_DOUBLE_EQ(dropped.stage.transients.held_logits, 0.0);
  // Dropped, the upcast still lives through the loss' forward; held, it lives on.
  EXPECT_GT(held.measures.max_memory_allocated, dropped.measures.max_memory_allocated);
  EXPECT_TRUE(config_of(kLlama8b + ",framework=custom").held_logits);  // a hand-written loop
  EXPECT_FALSE(config_of(kLlama8b).held_logits);
  EXPECT_FALSE(config_of(kLlama8b + ",framework=torchtune").held_logits);
}

// LitGPT's resource table (tutorials/resource-tables.md, lit-gpt 8641822): Llama 2 7B
// LoRA r=8 on query and value: 4,194,304 trainable parameters. Their gradients are
// the only gradients (bf16-true: 2 bytes each).
TEST(Adapters, LoraTrainsOnlyTheAdapters) {
  const Breakdown b = estimate_of("model=llama2-7b,seq_length=1024,framework=litgpt,precision=bf16-true,adapter=lora,"
                                  "lora_rank=8,lora_targets=qv");
  EXPECT_DOUBLE_EQ(b.stage.states.grads, 4194304.0 * 2.0);
  EXPECT_DOUBLE_EQ(b.stage.states.optimizer, 4194304.0 * 2.0 * 2.0);  // two bf16 moments
  const Breakdown full = estimate_of("model=llama2-7b,seq_length=1024,framework=litgpt,precision=bf16-true");
  EXPECT_LT(b.stage.states.total(), full.stage.states.total() / 3.0);
}

// QLoRA: NF4 codes (4 bits) + 8-bit absmax per 64 + fp32 per 256 absmax = 4.127 bits for
// the layers' linear weights (Dettmers et al. 2023, section 2 "Double Quantization").
TEST(Adapters, QloraStoresTheFrozenLinearsInNf4) {
  const std::string base = "model=llama2-7b,seq_length=1024,precision=bf16,adapter=";
  const double lora = estimate_of(base + "lora").stage.states.weights;
  const double qlora = estimate_of(base + "qlora").stage.states.weights;
  const ParamCounts p = count_parameters(config_of(base + "lora").geo);
  const double layer_linear = 32.0 * (p.per_layer - 2.0 * 4096);  // layers minus their two norms
  const double nf4 = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
  EXPECT_NEAR(lora - qlora, layer_linear * (2.0 - nf4), 1e3);
  EXPECT_EQ(error_of("model=llama2-7b,precision=fp32,adapter=qlora").field, "adapter");
  EXPECT_EQ(error_of("model=llama2-7b,lora_rank=16").field, "lora_rank");
}

TEST(Measures, AllocatedReservedAndProcessAreOrdered) {
  const Breakdown b = estimate_of("model=llama3-8b,seq_length=4096,num_gpus=8,zero_stage=3");
  EXPECT_LT(b.measures.max_memory_allocated, b.measures.max_memory_reserved);
  EXPECT_LT(b.measures.max_memory_reserved, b.measures.nvidia_smi);
  EXPECT_DOUBLE_EQ(b.measures.nvidia_smi, b.per_gpu_total);  // the fit decision's figure
  EXPECT_DOUBLE_EQ(b.measures.nvidia_smi - b.measures.max_memory_reserved,
                   b.overheads.cuda_context + b.overheads.nccl);
}

}  // namespace
}  // namespace trainfit::testing

namespace trainfit::testing {
namespace {

// The 110M Llama of tests/fidelity/hf_stack.py. The trainable counts below are PEFT 0.21's own
// (sum of requires_grad parameters, recorded in tests/fidelity/gpu/hf_stack-h200.json).
const std::string kSmallLlama =
    "num_layers=4,hidden_dim=1024,num_heads=16,num_kv_heads=4,ffn_hidden=2816,vocab_size=32000,"
    "tied_embeddings=false,seq_length=1024,micro_batch=2,num_gpus=1,gpu=h200,framework=hf,"
    "adapter=lora,lora_rank=16,base_dtype=bf16,precision=bf16";

// With fp32 adapters and AdamW, each trainable parameter holds 4 (weight) + 4 (grad) + 8
// (moments) bytes; the frozen bf16 base 2 bytes per parameter.
double trainable_of(const std::string& spec) {
  const Breakdown b = estimate_of(spec);
  return (b.stage.states.total() - 2.0 * b.params.total) / 16.0;
}

TEST(LoraTargets, ModuleListsCountWhatPeftTrains) {
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=q_proj+v_proj"), 212992);
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=q+k+v"), 294912);
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=all-linear"), 1163264);
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=gate_proj+up_proj+down_proj"), 737280);
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=q+k+v+gate+up+down"), 1032192);
  // DoRA adds one magnitude per output feature of each target: 1200128 - 1163264 = 36864.
  EXPECT_DOUBLE_EQ(trainable_of(kSmallLlama + ",lora_targets=all-linear,dora=true"), 1200128);
}

TEST(LoraTargets, ShorthandsAreUnionsOfModules) {
  EXPECT_EQ(*parse_lora_modules("qv", "f"), *parse_lora_modules("q_proj,v_proj", "f"));
  EXPECT_EQ(*parse_lora_modules("attention", "f"), *parse_lora_modules("q+k+v+o", "f"));
  EXPECT_EQ(*parse_lora_modules("[\"q_proj\", \"k_proj\"]", "f"), static_cast<uint32_t>(kLoraQ | kLoraK));
  EXPECT_EQ(lora_modules_name(*parse_lora_modules("v+q", "f")), "qv");
  EXPECT_EQ(lora_modules_name(kLoraQ | kLoraK | kLoraV), "q+k+v");
}

TEST(LoraTargets, BadModulesAreOneLineNamingTheWord) {
  const Error e = error_of(kSmallLlama + ",lora_targets=q+foo");
  EXPECT_EQ(e.field, "lora_targets");
  EXPECT_NE(e.message.find("'foo'"), std::string::npos) << e.message;
  EXPECT_EQ(error_of(kSmallLlama + ",lora_targets=qkv+q").field, "lora_targets");
  EXPECT_EQ(error_of(kSmallLlama + ",modules_to_save=q").field, "modules_to_save");
  EXPECT_EQ(error_of("model=llama3-8b,base_dtype=bf16").field, "base_dtype");  // no adapter
  EXPECT_EQ(error_of(kSmallLlama + ",adapter=qlora,base_dtype=bf16").field, "base_dtype");
  EXPECT_EQ(error_of(kSmallLlama + ",framework_version=four").field, "framework_version");
}

TEST(LoraTargets, ModulesToSaveTrainACopyInTheBaseDtype) {
  // PEFT ModulesToSaveWrapper: a bf16 copy of embed_tokens and lm_head (32000 x 1024 each),
  // its bf16 gradient and two bf16 AdamW moments: 4 x 2 bytes per parameter beyond the base.
  const Breakdown lora = estimate_of(kSmallLlama + ",lora_targets=qv");
  const Breakdown saved = estimate_of(kSmallLlama + ",lora_targets=qv,modules_to_save=embedding+lm_head");
  EXPECT_DOUBLE_EQ(saved.stage.states.total() - lora.stage.states.total(), 8.0 * 2 * 32000 * 1024);
}

TEST(LoraTargets, QuantizedBasesCountTheirPackedBytes) {
  // GPTQ/AWQ 4-bit, group 128, fp16 scale + 4-bit zero: (4 + 20/128) / 8 bytes per layer weight.
  const Config c = config_of(kSmallLlama + ",base_dtype=gptq");
  const Breakdown nf4 = estimate_of(kSmallLlama + ",adapter=qlora,base_dtype=nf4,kbit_fp32_rest=false");
  const Breakdown gptq = estimate(c);
  const double layer_linear = 4.0 * (1024.0 * (1024 + 256 + 256 + 1024) + 3.0 * 1024 * 2816);
  const double nf4_bytes = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
  EXPECT_NEAR(nf4.stage.states.weights - gptq.stage.states.weights, layer_linear * (nf4_bytes - (4.0 + 20.0 / 128) / 8), 1.0);
}

TEST(LoraTargets, FsdpGathersAFourBitBaseAsItIsStored) {
  // fms-acceleration (accelerated-peft autogptq_utils.py) views GPTQ's packed int32 tensors as
  // 16-bit Parameters, so FSDP shards and all-gathers the packed bytes, as it does NF4 in its
  // quant_storage: the current and the prefetched layer are (4 + 20/128) / 8 bytes per
  // parameter, not 2. Llama-2-70B layer: 8192 x (8192 + 1024 + 1024 + 8192) + 3 x 8192 x 28672
  // linear weights and 2 x 8192 norm weights; FSDP1's root unit stays gathered in 16 bits.
  const std::string spec = "model=llama2-70b,num_gpus=2,gpu=a100,micro_batch=2,seq_length=4096,framework=hf,"
                           "precision=fp16,adapter=lora,base_dtype=gptq,lora_targets=attention,sharding=fsdp-full";
  const Breakdown b = estimate_of(spec);
  const double layer = 8192.0 * (8192 + 1024 + 1024 + 8192) + 3.0 * 8192 * 28672 + 2.0 * 8192;
  const double root = 2.0 * (2.0 * 32000 * 8192 + 8192);  // FSDP1's root unit: embedding, head, final norm
  EXPECT_NEAR(b.stage.transients.fsdp_units_fwd, 2.0 * layer * (4.0 + 20.0 / 128) / 8 + root, 1e-6 * root);
}

TEST(FrameworkVersion, TransformersReleasesDecideTheLogitsAndTheBase) {
  const std::string hf = "model=llama3-8b,seq_length=4096,micro_batch=1,num_gpus=1,gpu=h200,framework=hf";
  const Config v445 = config_of(hf + ",framework_version=4.45,adapter=lora");
  EXPECT_EQ(v445.logits_upcast, LogitsUpcast::kInForward);  // modeling_llama.py 4.45: logits.float()
  EXPECT_TRUE(v445.logits_shift_copy);
  EXPECT_EQ(v445.base_dtype, BaseDtype::kFp32);             // 4.x from_pretrained: float32
  const Config v446 = config_of(hf + ",framework_version=4.46.3");
  EXPECT_EQ(v446.logits_upcast, LogitsUpcast::kInLoss);     // loss_utils.py ForCausalLMLoss
  EXPECT_TRUE(v446.logits_shift_copy);
  EXPECT_FALSE(config_of(hf + ",framework_version=4.49").logits_shift_copy);  // PR #35646
  const Config v5 = config_of(hf + ",framework_version=v5.2,adapter=lora");
  EXPECT_EQ(v5.base_dtype, BaseDtype::kBf16);               // dtype='auto'
  EXPECT_EQ(v5.precision, Precision::kBf16);                // nothing frozen is fp32
  EXPECT_TRUE(v5.adapter_autocast);
  // Explicit fields win over the release's conventions.
  EXPECT_EQ(config_of(hf + ",framework_version=4.45,logits_upcast=loss").logits_upcast, LogitsUpcast::kInLoss);
  // Unsaid, the newest release modelled, and the assumptions say which.
  EXPECT_EQ(config_of(hf).framework_version, "5.17");
}

TEST(FrameworkVersion, DeepSpeedAndLitgptReleases) {
  // DeepSpeed bf16 without ZeRO: BF16_Optimizer's fp32 gradients before v0.17.6, the model's
  // dtype from v0.17.6 (engine.py get_data_types, PR #7515); ZeRO keeps bf16 gradients.
  const std::string ds = "model=llama3-8b,seq_length=4096,micro_batch=1,num_gpus=8,gpu=h200,framework=deepspeed";
  EXPECT_TRUE(config_of(ds + ",framework_version=0.16.4,zero_stage=0").fp32_grads);
  EXPECT_FALSE(config_of(ds + ",framework_version=0.17.6,zero_stage=0").fp32_grads);
  EXPECT_FALSE(config_of(ds + ",framework_version=0.16.4,zero_stage=2").fp32_grads);
  EXPECT_EQ(config_of(ds).framework_version, "0.19.5");
  // LitGPT LoRA on several GPUs: FSDPStrategy (FSDP1) before v0.5.11, fully_shard without a
  // MixedPrecisionPolicy from v0.5.11 (finetune/lora.py): the blocks gather in fp32 under bf16-mixed.
  const std::string lg = "model=llama3-8b,seq_length=2048,micro_batch=1,num_gpus=4,gpu=h200,framework=litgpt,adapter=lora";
  const Config v510 = config_of(lg + ",framework_version=0.5.10");
  const Config v511 = config_of(lg + ",framework_version=0.5.11");
  EXPECT_EQ(v510.fsdp_version, 1);
  EXPECT_TRUE(v510.fsdp_mixed_precision);
  EXPECT_EQ(v511.fsdp_version, 2);
  EXPECT_FALSE(v511.fsdp_mixed_precision);
  const Breakdown mixed = estimate_of(lg + ",framework_version=0.5.11,fsdp_mixed_precision=true,recompute=full");
  const Breakdown stored = estimate_of(lg + ",framework_version=0.5.11,recompute=full");
  EXPECT_DOUBLE_EQ(stored.stage.transients.fsdp_units_fwd, 2.0 * mixed.stage.transients.fsdp_units_fwd);
}

// LitGPT LoRA on several GPUs before v0.5.8: one FSDP1 unit per Block with
// use_orig_params=True (Lightning's FSDPStrategy) gives the frozen weights gradients, kept
// unsharded by no_sync accumulation (FSDP.no_sync docs: "full model gradients"); from 0.5.8
// frozen linears are units of their own (PR #1538). The extra gradients are the Blocks'
// parameters in bf16: Llama 2 7B's 6,738,415,616 (its config.json) less the embedding and the
// LM head (2 x 32000 x 4096) and the final norm (4096) = 6,476,267,520 parameters.
TEST(FrameworkVersion, LitgptFsdp1GivesFrozenWeightsGradients) {
  const std::string lg = "model=llama2-7b,seq_length=1024,micro_batch=1,num_gpus=2,gpu=a100-40gb,framework=litgpt,"
                         "precision=bf16-true,adapter=lora,lora_rank=8,lora_targets=qv,sharding=fsdp-full";
  EXPECT_EQ(config_of(lg + ",framework_version=0.5.7,num_microbatches=4").frozen_unit_grads, FrozenUnitGrads::kFull);
  EXPECT_EQ(config_of(lg + ",framework_version=0.5.7,num_microbatches=1").frozen_unit_grads, FrozenUnitGrads::kSharded);
  EXPECT_EQ(config_of(lg + ",framework_version=0.5.8,num_microbatches=4").frozen_unit_grads, FrozenUnitGrads::kNone);
  EXPECT_EQ(config_of(lg + ",framework_version=0.5.7,num_microbatches=4,frozen_unit_grads=none").frozen_unit_grads,
            FrozenUnitGrads::kNone);  // what the request says wins
  const double blocks = 6738415616.0 - 2.0 * 32000 * 4096 - 4096;
  const Breakdown none = estimate_of(lg + ",framework_version=0.5.8,num_microbatches=4");
  const Breakdown full = estimate_of(lg + ",framework_version=0.5.7,num_microbatches=4");
  const Breakdown sharded = estimate_of(lg + ",framework_version=0.5.7,num_microbatches=1");
  EXPECT_DOUBLE_EQ(full.stage.states.grads - none.stage.states.grads, blocks * 2.0);
  EXPECT_DOUBLE_EQ(sharded.stage.states.grads - none.stage.states.grads, blocks * 2.0 / 2.0);
  const Error e = error_of(lg + ",frozen_unit_grads=some");
  EXPECT_EQ(e.field, "frozen_unit_grads");
  EXPECT_NE(e.message.find("none|sharded|full"), std::string::npos) << e.message;
}

// bitsandbytes keeps a 4-bit weight's QuantState (8-bit absmax per 64 weights, fp32 absmax
// per 256 of those) on the module, outside any Parameter: FSDP neither shards nor offloads it
// (nn/modules.py Params4bit.to). With the parameters offloaded, that is all a GPU keeps of the
// base: Llama 2 7B's layer linears, 32 x (4 x 4096^2 + 3 x 4096 x 11008) = 6,476,005,376
// weights, at (8/64 + 32/(64*256)) / 8 bytes each. torchao's NF4Tensor is sharded whole.
TEST(Qlora, BitsandbytesQuantStatesStayOnEveryGpu) {
  const std::string spec = "model=llama2-7b,num_gpus=4,micro_batch=1,seq_length=1024,precision=bf16-true,"
                           "adapter=qlora,lora_rank=8,lora_targets=qv,sharding=fsdp-full,offload_params=true";
  const double layer_linear = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008);
  const double quant_state = layer_linear * (8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
  EXPECT_NEAR(estimate_of(spec).stage.states.weights, quant_state, 1.0);
  EXPECT_NEAR(estimate_of(spec + ",nf4_kernel=torchao").stage.states.weights, 0.0, 1.0);
}

TEST(Qlora, BitsandbytesBefore0432SavesEachQuantizedLinearsInput) {
  // bitsandbytes 0.43.1 MatMul4Bit.forward: ctx.tensors = (A, B) — per layer the attention norm's
  // output (q, k, v), the attention output (o), the MLP norm's output (gate, up) and the MLP
  // product (down), in bf16: 2 x T x (2h + h + F). torchao's LinearNF4 keeps only the weight.
  const std::string spec = "model=llama2-7b,num_gpus=1,micro_batch=2,seq_length=1024,precision=bf16-true,"
                           "adapter=qlora,lora_dropout=0.05,recompute=none";
  const Breakdown bnb = estimate_of(spec + ",nf4_kernel=bitsandbytes,bitsandbytes_version=0.43.1");
  const Breakdown torchao = estimate_of(spec + ",nf4_kernel=torchao");
  EXPECT_DOUBLE_EQ(bnb.stage.activations.per_layer - torchao.stage.activations.per_layer,
                   2.0 * 2048 * (3 * 4096.0 + 11008));
  EXPECT_FALSE(config_of(spec + ",framework=torchtune").nf4_saves_input);  // torchtune's QLoRA is torchao's
  EXPECT_TRUE(config_of(spec + ",framework=hf,bitsandbytes_version=0.41.1").nf4_saves_input);
  EXPECT_EQ(error_of(spec + ",nf4_kernel=triton").field, "nf4_kernel");
}

TEST(Qlora, NonReentrantCheckpointKeepsWhatBitsandbytesHoldsOnCtx) {
  // A reentrant checkpoint runs the layer's forward under no_grad: the MatMul4Bit nodes and their
  // ctx.tensors go at once. A non-reentrant one builds the graph and swaps only the saved
  // tensors (torch/utils/checkpoint.py), so 0.43.1's ctx.tensors = (A, B) keeps every layer's
  // 4-bit inputs to the backward: per layer 2 x T x (2h + h + F) bytes, 32 layers in flight.
  const std::string spec = "model=llama2-7b,num_gpus=1,micro_batch=2,seq_length=1024,precision=bf16-true,"
                           "adapter=qlora,lora_dropout=0.05,recompute=full,bitsandbytes_version=0.43.1";
  const Breakdown reentrant = estimate_of(spec + ",use_reentrant=true");
  const Breakdown non_reentrant = estimate_of(spec + ",use_reentrant=false");
  EXPECT_DOUBLE_EQ(non_reentrant.stage.activations.layers - reentrant.stage.activations.layers,
                   32 * 2.0 * 2048 * (3 * 4096.0 + 11008));
  // From 0.43.2 the ctx keeps only the weight: the style changes nothing.
  const std::string fixed = spec + ",bitsandbytes_version=0.43.2";
  EXPECT_DOUBLE_EQ(estimate_of(fixed + ",use_reentrant=false").stage.activations.layers,
                   estimate_of(fixed + ",use_reentrant=true").stage.activations.layers);
}

// The style each framework checkpoints with when the job does not say: transformers' no-kwargs
// default flipped to non-reentrant in 5.0 (PR #43203); torch's checkpoint_wrapper is NO_REENTRANT.
TEST(Frameworks, CheckpointStyleByFrameworkAndRelease) {
  EXPECT_TRUE(config_of(kLlama8b + ",framework=hf,framework_version=4.45,recompute=full").use_reentrant);
  EXPECT_FALSE(config_of(kLlama8b + ",framework=hf,framework_version=5.0,recompute=full").use_reentrant);
  EXPECT_FALSE(config_of(kLlama8b + ",framework=torchtune").use_reentrant);
  EXPECT_FALSE(config_of(kLlama8b + ",framework=torchtitan").use_reentrant);
  EXPECT_TRUE(config_of(kLlama8b + ",framework=megatron").use_reentrant);
  EXPECT_TRUE(config_of(kLlama8b + ",recompute=full").use_reentrant);
  EXPECT_TRUE(config_of(kLlama8b + ",framework=hf,framework_version=5.0,use_reentrant=true").use_reentrant);
  // held_layer_inputs is the reentrant checkpoint's detached inputs: never by default without it.
  const std::string fsdp1 = "model=llama2-7b,num_gpus=2,micro_batch=1,seq_length=1024,framework=hf,adapter=lora,"
                            "recompute=full,sharding=fsdp-full,fsdp_version=1";
  EXPECT_TRUE(config_of(fsdp1 + ",use_reentrant=true").held_layer_inputs);
  EXPECT_FALSE(config_of(fsdp1 + ",use_reentrant=false").held_layer_inputs);
}

TEST(Qlora, BitsandbytesFrom0432SavesOnlyTheWeight) {
  // bitsandbytes 0.43.2 (PR #1270) MatMul4Bit.forward: ctx.tensors = (None, B); backward needs
  // only dY and the weight. With no dropout on the adapters there is then nothing the 4-bit
  // kernel adds to what torchao's kernel saves; the newest release is the default.
  const std::string spec = "model=llama2-7b,num_gpus=1,micro_batch=2,seq_length=1024,precision=bf16-true,"
                           "adapter=qlora,lora_dropout=0.05,recompute=none";
  const Breakdown torchao = estimate_of(spec + ",nf4_kernel=torchao");
  for (const std::string release : {"0.43.2", "0.45.0", "1.0"}) {
    const Breakdown bnb = estimate_of(spec + ",bitsandbytes_version=" + release);
    EXPECT_DOUBLE_EQ(bnb.stage.activations.per_layer, torchao.stage.activations.per_layer) << release;
  }
  EXPECT_FALSE(config_of(spec).nf4_saves_input);
  EXPECT_EQ(config_of(spec).bitsandbytes_version, "0.49.2");
  // The release and the field that says it: the field wins.
  EXPECT_TRUE(config_of(spec + ",bitsandbytes_version=0.45.0,nf4_saves_input=true").nf4_saves_input);
  EXPECT_FALSE(config_of(spec + ",bitsandbytes_version=0.43.1,nf4_saves_input=false").nf4_saves_input);
  EXPECT_EQ(error_of(spec + ",bitsandbytes_version=new").field, "bitsandbytes_version");
  EXPECT_EQ(error_of("model=llama2-7b,adapter=lora,nf4_saves_input=true").field, "nf4_saves_input");
  EXPECT_TRUE(config_of(spec + ",nf4_kernel=torchao").bitsandbytes_version.empty());
}

TEST(Qlora, TheWeightBeingMultipliedIsDequantizedWhole) {
  // bitsandbytes MatMul4Bit.backward: grad_A = grad_output @ dequantize_4bit(B).to(dtype).t();
  // torchao linear_nf4: weight.to(input.dtype). The widest is the MLP's, 4096 x 11008 in bf16,
  // split by tensor parallelism; a 16-bit base multiplies by the weight it holds.
  const std::string spec = "model=llama2-7b,num_gpus=2,micro_batch=1,seq_length=1024,precision=bf16-true,"
                           "lora_dropout=0,recompute=full,kbit_fp32_rest=false";
  for (const std::string kernel : {"bitsandbytes", "torchao"}) {
    const Breakdown nf4 = estimate_of(spec + ",adapter=qlora,nf4_kernel=" + kernel);
    const Breakdown bf16 = estimate_of(spec + ",adapter=lora,base_dtype=bf16");
    EXPECT_DOUBLE_EQ(nf4.stage.transients.layer_backward - bf16.stage.transients.layer_backward, 2.0 * 4096 * 11008)
        << kernel;
  }
  const Breakdown tp2 = estimate_of(spec + ",adapter=qlora,tensor_parallel=2");
  const Breakdown tp2_bf16 = estimate_of(spec + ",adapter=lora,base_dtype=bf16,tensor_parallel=2");
  EXPECT_DOUBLE_EQ(tp2.stage.transients.layer_backward - tp2_bf16.stage.transients.layer_backward, 4096.0 * 11008);
}

// DeepSpeed ZeRO-3 gathers parameter by parameter (partitioned_param_coordinator.py at v0.16.4):
// the prefetcher fills a window up to stage3_max_live_parameters, parameters reused within
// stage3_max_reuse_distance stay (about half of it across the forward-backward turn), plus the
// tensor being run; parameters of at most stage3_param_persistence_threshold elements stay for
// good. Llama-2-70B: the largest tensor is the 32000 x 8192 embedding (262,144,000 elements), the
// norms 161 x 8192 (1,318,912, under the 1e5 default); 16-bit gathers.
TEST(DeepSpeedZero3, GathersUpToMaxLiveParameters) {
  const std::string spec = "model=llama2-70b,num_gpus=8,gpu=h100,micro_batch=1,seq_length=4096,framework=deepspeed,"
                           "precision=bf16,zero_stage=3,sharding=zero,recompute=full";
  const double embedding = 32000.0 * 8192, norms = 161.0 * 8192;
  EXPECT_DOUBLE_EQ(estimate_of(spec).stage.transients.fsdp_units_fwd, 2.0 * (embedding + 1e9 + norms));
  // No prefetch: only the reuse distance's half keeps parameters across the turn.
  EXPECT_DOUBLE_EQ(estimate_of(spec + ",stage3_prefetch_bucket_size=0,stage3_max_reuse_distance=200000000")
                       .stage.transients.fsdp_units_fwd, 2.0 * (embedding + 1e8 + norms));
  // Nothing persistent under a threshold of 0; "auto" (10 x 8192) keeps the norms.
  EXPECT_DOUBLE_EQ(estimate_of(spec + ",stage3_param_persistence_threshold=0").stage.transients.fsdp_units_fwd,
                   2.0 * (embedding + 1e9));
  EXPECT_DOUBLE_EQ(config_of(spec + ",stage3_param_persistence_threshold=auto").zero3.persistence_threshold, 81920.0);
  EXPECT_DOUBLE_EQ(config_of(spec + ",stage3_prefetch_bucket_size=auto").zero3.prefetch_bucket, std::floor(0.9 * 8192 * 8192));
  // With accumulation the embedding stays gathered outside the window, except in v0.16.0-v0.16.7.
  EXPECT_DOUBLE_EQ(estimate_of(spec + ",num_microbatches=4").stage.transients.fsdp_units_fwd,
                   2.0 * (2.0 * embedding + 1e9 + norms));
  EXPECT_DOUBLE_EQ(estimate_of(spec + ",num_microbatches=4,framework_version=0.16.4").stage.transients.fsdp_units_fwd,
                   2.0 * (embedding + 1e9 + norms));
  EXPECT_EQ(error_of(spec + ",stage3_max_live_parameters=auto").field, "stage3_max_live_parameters");
  EXPECT_EQ(error_of(spec + ",stage3_max_reuse_distance=-1").field, "stage3_max_reuse_distance");
}

TEST(Fsdp1, ReentrantCheckpointAroundFrozenUnitsHoldsEveryLayerInput) {
  // FSDP1 reshards a frozen unit from register_multi_grad_hook on its inputs; inside HF's
  // reentrant checkpoint those are detached leaves whose AccumulateGrad the hook's closure
  // holds: each layer's input (b*s*h*2 bytes, bf16) and its gradient live to the end of
  // backward. At layer 0's backward the other 79 layers' inputs and gradients are extra:
  // 2 x 79 x 2 x 4096 x 8192 x 2 bytes for Llama-2-70B at batch 2 x 4096.
  // transformers 4.x: reentrant unless told (use_reentrant's default by release).
  const std::string spec = "model=llama2-70b,num_gpus=2,gpu=a100,micro_batch=2,seq_length=4096,framework=hf,"
                           "framework_version=4.45,precision=bf16,adapter=qlora,lora_targets=attention,"
                           "sharding=fsdp-full,recompute=full";
  const Config c = config_of(spec);
  EXPECT_TRUE(c.held_layer_inputs);
  const Breakdown held = estimate_of(spec);
  const Breakdown not_held = estimate_of(spec + ",held_layer_inputs=false");
  const double layer_input = 2.0 * 4096 * 8192 * 2;
  EXPECT_DOUBLE_EQ(held.stage.transients.held_layer_inputs, 2.0 * 79 * layer_input);
  EXPECT_DOUBLE_EQ(not_held.stage.transients.held_layer_inputs, 0.0);
  EXPECT_GT(held.stage.backward_peak, not_held.stage.backward_peak);
  // Not held: FSDP2, DeepSpeed ZeRO-3, full fine-tuning (the unit's flat parameter trains),
  // no checkpointing, and LitGPT's units that mix frozen and trainable weights.
  EXPECT_FALSE(config_of(spec + ",fsdp_version=2").held_layer_inputs);
  EXPECT_FALSE(config_of(spec + ",sharding=zero").held_layer_inputs);
  EXPECT_FALSE(config_of("model=llama2-70b,num_gpus=2,gpu=a100,micro_batch=2,seq_length=4096,framework=hf,"
                         "precision=bf16,sharding=fsdp-full,recompute=full").held_layer_inputs);
  EXPECT_FALSE(config_of(spec + ",recompute=none").held_layer_inputs);
  EXPECT_FALSE(config_of(spec + ",frozen_unit_grads=sharded").held_layer_inputs);
  EXPECT_EQ(error_of(spec + ",sharding=zero,held_layer_inputs=true").field, "held_layer_inputs");
  EXPECT_EQ(error_of(spec + ",recompute=none,held_layer_inputs=true").field, "held_layer_inputs");
}

TEST(Torchtitan, LossParallelAndTheGatheredHeadInput) {
  // torch loss_parallel backward, (zeros_like(x).index_put_ + exp(x)) * grad: gradient, exp(x)
  // and their sum beside the saved fp32 log-softmax: three fp32 vocab-shard buffers in
  // backward. The head's ColwiseParallel input is all-gathered over the sequence and saved:
  // 16-bit, b*s*h, not divided by the SP degree.
  const std::string spec = "model=llama3-8b,num_gpus=8,gpu=h100,micro_batch=2,seq_length=4096,framework=torchtitan,"
                           "framework_version=0.0,compile=true,tensor_parallel=4,sequence_parallel=true,recompute=full";
  const Breakdown b = estimate_of(spec);
  const double tokens = 2.0 * 4096, vocab_shard = 128256.0 / 4;
  EXPECT_DOUBLE_EQ(b.stage.transients.loss_backward, 3.0 * 4.0 * tokens * vocab_shard);
  const Breakdown tp1 = estimate_of("model=llama3-8b,num_gpus=8,gpu=h100,micro_batch=2,seq_length=4096,"
                                    "framework=torchtitan,framework_version=0.0,compile=true,recompute=full");
  EXPECT_DOUBLE_EQ(tp1.stage.transients.loss_backward, 2.0 * 4.0 * tokens * 128256.0);
  // Saved at the loss: the fp32 log-softmax shard and the whole gathered head input (the
  // final norm's own tensors come on top, divided by SP).
  EXPECT_GT(b.stage.activations.logits_loss, 4.0 * tokens * vocab_shard + 2.0 * tokens * 4096);
}

TEST(Ddp, BucketsAreAFullGradientCopy) {
  // Measured (tests/fidelity/gpu/hf_stack-h200.json): DDP raised the peak by 0.96 x the fp32
  // gradients. trainfit: the buckets equal the gradients of what trains.
  const std::string spec = "model=llama3-8b,seq_length=1024,micro_batch=1,num_gpus=2,gpu=h200,precision=bf16-amp";
  const Breakdown ddp = estimate_of(spec);
  const Breakdown capped = estimate_of(spec + ",ddp_full_buckets=false");
  EXPECT_DOUBLE_EQ(ddp.stage.transients.comm_buckets, 4.0 * ddp.params.total);
  EXPECT_DOUBLE_EQ(capped.stage.transients.comm_buckets, 2.0 * 25 * 1024 * 1024);  // bucket_cap_mb=25, two in flight
}

TEST(Ddp, ZeroRedundancyOptimizerShardsOnlyTheOptimizer) {
  // torch ZeroRedundancyOptimizer over DDP: Adam's two fp32 moments split over the 8 ranks;
  // fp32 parameters and gradients whole; DDP's buckets (the gradients), not DeepSpeed's 5e8.
  const std::string spec = "model=llama3-8b,seq_length=1024,micro_batch=1,num_gpus=8,gpu=h200,precision=bf16-amp";
  const Breakdown z = estimate_of(spec + ",sharding=zero-redundancy");
  const double n = z.params.total;
  EXPECT_EQ(config_of(spec + ",sharding=zero-redundancy").zero_stage, 1);
  EXPECT_DOUBLE_EQ(z.stage.states.optimizer, 8.0 * n / 8);
  EXPECT_DOUBLE_EQ(z.stage.states.weights, 4.0 * n);
  EXPECT_DOUBLE_EQ(z.stage.states.grads, 4.0 * n);
  EXPECT_DOUBLE_EQ(z.stage.transients.comm_buckets, 4.0 * n);
  EXPECT_EQ(error_of(spec + ",sharding=zero-redundancy,zero_stage=2").field, "zero_stage");
}

TEST(Zero3, TheIpgBucketIsAllocatedWithTheOptimizerAndKept) {
  // DeepSpeed stage3.py (v0.14.0) allocates __ipg_bucket_flat_buffer, reduce_bucket_size = 5e8
  // elements in the model's dtype, when the optimizer is built: 1e9 bytes under bf16, in the
  // forward as in the backward, and as large for LoRA's few trainable weights as for the model.
  const std::string spec = "model=llama2-70b,seq_length=2048,micro_batch=1,num_gpus=8,gpu=h100,framework=deepspeed,"
                           "precision=bf16,zero_stage=3,sharding=zero,recompute=full";
  const Breakdown full = estimate_of(spec);
  const Breakdown lora = estimate_of(spec + ",adapter=lora,lora_targets=all-linear");
  EXPECT_DOUBLE_EQ(full.stage.transients.comm_buckets, 1e9);
  EXPECT_DOUBLE_EQ(lora.stage.transients.comm_buckets, 1e9);
  const Breakdown z2 = estimate_of(spec + ",zero_stage=2");
  const Breakdown z3 = estimate_of(spec + ",adapter=lora,lora_targets=all-linear,recompute=none,micro_batch=4");
  // Resident: the optimizer-step peak (activations freed) holds it too.
  EXPECT_GE(z3.stage.optimizer_peak - z3.stage.states.total(), 1e9);
  EXPECT_DOUBLE_EQ(z2.stage.transients.comm_buckets, 5e8 * 2.0);  // ZeRO-2's reduce bucket: unchanged
}

TEST(Moe, TransformersLoopOverTheExperts) {
  // transformers' MixtralSparseMoeBlock runs the experts one after another and adds each back
  // with index_add_, whose backward expands the gradient as its source (derivatives.yaml
  // index_add): each routed copy's weighted output is saved, k x h in the residual dtype (bf16
  // here), with its token index (16 bytes: the where() storage of slot and token, int64).
  const std::string spec = "model=mixtral-8x7b,num_gpus=8,zero_stage=1,seq_length=4096,micro_batch=1,precision=bf16,"
                           "recompute=none,attention=flash";
  const Config hf = config_of(spec + ",framework=hf");
  EXPECT_TRUE(hf.moe_expert_loop);
  EXPECT_FALSE(config_of(spec + ",framework=megatron").moe_expert_loop);
  const Breakdown loop = estimate_of(spec + ",moe_expert_loop=true");
  const Breakdown grouped = estimate_of(spec + ",moe_expert_loop=false");
  const double tokens = 4096, layers = 32;
  EXPECT_NEAR(loop.stage.activations.per_layer - grouped.stage.activations.per_layer,
              tokens * (2.0 * 2 * 4096 + 16.0 * 2), 1.0);
  // Backward finishes one expert before the next: one expert's share (k/E of the tokens) of the
  // two F-wide gradients, 2 x 2 bytes x 4096 x 2/8 x 14336, not all eight experts' at once;
  // the trainable experts' weight gradients meanwhile come on top (Moe.ExpertGradients...).
  const double all_experts = 2.0 * 2 * tokens * 2 * 14336, one_share = all_experts / 8;
  const Breakdown frozen_loop = estimate_of(spec + ",moe_expert_loop=true,adapter=lora,lora_targets=attention");
  const Breakdown frozen_grouped = estimate_of(spec + ",moe_expert_loop=false,adapter=lora,lora_targets=attention");
  EXPECT_NEAR(frozen_grouped.stage.transients.layer_backward - frozen_loop.stage.transients.layer_backward,
              all_experts - one_share, 1.0);
  (void)layers;
}

TEST(Moe, ExpertGradientsOutgrowWhatFinishedExpertsFree) {
  // Full training in the loop: expert e's weight gradients (3 x 4096 x 14336) appear as its
  // saved tensors go; at the last expert E x g - (E-1) x s are there beyond the layer's start
  // (measured on the CPU: tests/fidelity, "llama MoE 8 experts, wide").
  const std::string spec = "model=mixtral-8x7b,num_gpus=8,zero_stage=1,seq_length=4096,micro_batch=1,precision=bf16,"
                           "recompute=full,attention=flash,framework=hf";
  // hf's bf16 is autocast over fp32 weights: fp32 gradients, and a bf16 copy of each weight saved.
  const double g = 4.0 * 3 * 4096 * 14336;
  const double growth = estimate_of(spec).stage.transients.layer_backward -
                        estimate_of(spec + ",zero_stage=2").stage.transients.layer_backward;  // ZeRO-2: none
  EXPECT_GE(growth, g);      // at least the last expert's own
  EXPECT_LT(growth, 8 * g);  // less than all eight: the finished experts' saved tensors are gone
}

TEST(Fsdp, CpuOffloadTakesTheOptimizerAlong) {
  // FSDP's CPU offload: sharded parameters, gradients, and the optimizer built on them on the CPU.
  const std::string spec = "model=llama3-8b,seq_length=2048,micro_batch=1,num_gpus=8,gpu=a100-80g,precision=bf16-amp,"
                           "sharding=fsdp-full,offload_params=true";
  const Config c = config_of(spec);
  EXPECT_TRUE(c.offload_optimizer);
  const Breakdown b = estimate(c);
  EXPECT_DOUBLE_EQ(b.stage.states.total(), 0.0);
  EXPECT_DOUBLE_EQ(b.stage.transients.optimizer_step, 0.0);
  EXPECT_EQ(error_of(spec + ",offload_optimizer=false").field, "offload_optimizer");
}

TEST(Fsdp, QloraOffloadMovesTheAdaptersGradientsNotTheModels) {
  // Llama-2-70B QLoRA r64 on q,k,v,gate,up,down (745 M adapter parameters, counted from the
  // shapes: 80 x 64 x (2h + 2(h+kv) + 3(h+F))), FSDP offload over 2 GPUs. Host RAM per GPU: half the
  // NF4 base (about 36 GB) and of the bf16 adapters, their moments and fp32 gradients (about
  // 7.5 GB): 19-23 GiB. The fp32 gradient copy of all 69 B parameters would add 128 GiB.
  const Breakdown b = estimate_of("model=llama2-70b,num_gpus=2,micro_batch=1,seq_length=2048,framework=hf,"
                                  "precision=bf16-true,adapter=qlora,lora_rank=64,lora_dtype=bf16,"
                                  "lora_targets=q+k+v+gate+up+down,sharding=fsdp-full,offload_params=true");
  EXPECT_GT(b.host_offload_per_gpu, 19.0 * (1 << 30));
  EXPECT_LT(b.host_offload_per_gpu, 23.0 * (1 << 30));
}

TEST(Fsdp, Fsdp1KeepsTheRootUnitGathered) {
  // Llama-3-8B's root unit: the embedding and the LM head (128256 x 4096 each) and the final
  // norm (4096), gathered in bf16.
  const std::string spec = "model=llama3-8b,seq_length=2048,micro_batch=1,num_gpus=8,gpu=a100-80g,precision=bf16-amp,"
                           "sharding=fsdp-full";
  const Breakdown v1 = estimate_of(spec + ",fsdp_version=1");
  const Breakdown v2 = estimate_of(spec + ",fsdp_version=2");
  EXPECT_DOUBLE_EQ(v1.stage.transients.fsdp_units_fwd - v2.stage.transients.fsdp_units_fwd, 2.0 * (2 * 128256.0 * 4096 + 4096));
  EXPECT_EQ(config_of(spec + ",framework=hf").fsdp_version, 1);         // accelerate's default
  EXPECT_EQ(config_of(spec + ",framework=torchtune").fsdp_version, 2);  // fully_shard
  EXPECT_EQ(error_of(spec + ",fsdp_version=3").field, "fsdp_version");
}

TEST(Qlora, PrepareForKbitTrainingMakesTheRestFp32) {
  // PEFT prepare_model_for_kbit_training (peft/utils/other.py) casts every parameter that is not
  // 4-bit to fp32: Llama-2-7B's embedding and LM head (32000 x 4096 each), its 65 norms (4096
  // each) then take 4 bytes, and the residual stream they produce is fp32, so a checkpointed
  // layer keeps an fp32 input: 4 x 4096 bytes a token.
  const std::string spec = "model=llama2-7b,seq_length=2048,micro_batch=1,num_gpus=1,gpu=a100,framework=hf,"
                           "adapter=qlora,recompute=full";
  const Config c = config_of(spec);
  EXPECT_TRUE(c.kbit_fp32_rest);
  const Breakdown fp32_rest = estimate(c);
  const Breakdown bf16_rest = estimate_of(spec + ",kbit_fp32_rest=false");
  const double rest = 2.0 * 32000 * 4096 + 65.0 * 4096;
  EXPECT_DOUBLE_EQ(fp32_rest.stage.states.weights - bf16_rest.stage.states.weights, 2.0 * rest);
  EXPECT_DOUBLE_EQ(fp32_rest.stage.activations.per_layer, 4.0 * 2048 * 4096);
  // TRL leaves sharded QLoRA (FSDP) alone: its flat parameters keep one dtype.
  EXPECT_FALSE(config_of(spec + ",num_gpus=2,sharding=fsdp-full").kbit_fp32_rest);
  EXPECT_EQ(error_of("model=llama2-7b,kbit_fp32_rest=true").field, "kbit_fp32_rest");
}

}  // namespace
}  // namespace trainfit::testing

namespace trainfit::testing {
namespace {

// The caching allocator's reserve above the allocated peak (transients.cpp overheads). Without
// expandable segments: at least the loss' forward buffers, and a length curriculum of n rising
// lengths keeps (n-1)/2 of the longest step's largest buffers besides (get_free_block serves a
// request only from a block at least as large). With expandable_segments:True a freed block
// merges with its free neighbours in the one growing segment: only the 5% floor stays.
TEST(Allocator, ExpandableSegmentsKeepOnlyTheFloor) {
  const std::string spec = "model=llama3-8b,num_gpus=1,gpu=h200,micro_batch=2,seq_length=4096,precision=bf16,"
                           "adapter=lora,recompute=full";
  const Breakdown plain = estimate_of(spec);
  EXPECT_DOUBLE_EQ(plain.overheads.allocator,
                   std::max(0.05 * plain.stage.tensor_peak, plain.stage.transients.loss_forward));
  const Breakdown rising = estimate_of(spec + ",batch_lengths=rising,rising_lengths=5");
  EXPECT_DOUBLE_EQ(rising.overheads.allocator - plain.overheads.allocator,
                   2.0 * std::max(plain.stage.transients.loss_forward, plain.stage.transients.loss_backward));
  for (const std::string more : {"", ",rising_lengths=5"}) {
    const Breakdown expandable = estimate_of(spec + ",alloc_conf=expandable_segments:True" + more);
    EXPECT_DOUBLE_EQ(expandable.overheads.allocator, 0.05 * expandable.stage.tensor_peak) << more;
  }
  // Random order is judged at its longest length, as fixed steps are.
  EXPECT_DOUBLE_EQ(estimate_of(spec + ",batch_lengths=random").per_gpu_total, plain.per_gpu_total);
  EXPECT_EQ(config_of(spec + ",rising_lengths=3").batch_lengths, BatchLengths::kRising);
  // Bad input names the field: torch's own parser refuses unknown options and other spellings.
  EXPECT_EQ(error_of(spec + ",alloc_conf=expandable_segments:yes").field, "alloc_conf");
  EXPECT_EQ(error_of(spec + ",alloc_conf=garbage:1").field, "alloc_conf");
  EXPECT_EQ(error_of(spec + ",batch_lengths=sorted").field, "batch_lengths");
  EXPECT_EQ(error_of(spec + ",batch_lengths=random,rising_lengths=4").field, "rising_lengths");
}

}  // namespace
}  // namespace trainfit::testing
