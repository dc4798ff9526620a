// The words of each enumerated request field, one table per enum: resolve reads a field
// through its table (take_enum) and the response names a value through the same table
// (to_string, names.cpp), so a word is written once.
#pragma once

#include "choices.h"
#include "trainfit/config.h"

namespace trainfit::resolving {

inline constexpr Choice<Precision> kPrecisions[] = {{"fp32", Precision::kFp32},
                                             {"bf16", Precision::kBf16},
                                             {"bf16-amp", Precision::kBf16Amp},
                                             {"fp16-amp", Precision::kFp16Amp},
                                             {"fp8", Precision::kFp8}};
inline constexpr Choice<Optimizer> kOptimizers[] = {{"adamw", Optimizer::kAdamW},
                                             {"adamw-8bit", Optimizer::kAdamW8bit},
                                             {"sgd", Optimizer::kSgd},
                                             {"adafactor", Optimizer::kAdafactor},
                                             {"lion", Optimizer::kLion}};
inline constexpr Choice<OptimizerImpl> kOptimizerImpls[] = {
    {"foreach", OptimizerImpl::kForeach}, {"fused", OptimizerImpl::kFused}, {"loop", OptimizerImpl::kLoop}};
inline constexpr Choice<Recompute> kRecomputes[] = {{"none", Recompute::kNone},
                                             {"selective", Recompute::kSelective},
                                             {"full", Recompute::kFull},
                                             {"op", Recompute::kOp}};
inline constexpr Choice<Attention> kAttentions[] = {{"eager", Attention::kEager}, {"flash", Attention::kFlash}};
inline constexpr Choice<Ops> kOps[] = {{"eager", Ops::kEager}, {"fused", Ops::kFused}};
inline constexpr Choice<Loss> kLosses[] = {{"standard", Loss::kStandard}, {"chunked", Loss::kChunked}, {"fused", Loss::kFused}};
inline constexpr Choice<Adapter> kAdapters[] = {{"none", Adapter::kNone}, {"lora", Adapter::kLora}, {"qlora", Adapter::kQlora}};
inline constexpr Choice<BaseDtype> kBaseDtypes[] = {{"fp32", BaseDtype::kFp32}, {"bf16", BaseDtype::kBf16},
                                             {"fp16", BaseDtype::kFp16}, {"nf4", BaseDtype::kNf4},
                                             {"gptq", BaseDtype::kGptq}, {"awq", BaseDtype::kAwq}};
inline constexpr Choice<FitBound> kFitBounds[] = {{"point", FitBound::kPoint}, {"likely_high", FitBound::kLikelyHigh},
                                                  {"likely_low", FitBound::kLikelyLow}};
inline constexpr Choice<Mlp> kMlps[] = {{"swiglu", Mlp::kSwiGlu}, {"gelu", Mlp::kGelu}};
inline constexpr Choice<Norm> kNorms[] = {{"rmsnorm", Norm::kRmsNorm}, {"layernorm", Norm::kLayerNorm}};
inline constexpr Choice<Sharding> kShardings[] = {{"zero", Sharding::kZero},
                                           {"fsdp-full", Sharding::kFsdpFull},
                                           {"fsdp-grad-op", Sharding::kFsdpGradOp},
                                           {"fsdp-hybrid", Sharding::kFsdpHybrid},
                                           {"zero-redundancy", Sharding::kZeroRedundancy}};
inline constexpr Choice<FrozenUnitGrads> kFrozenUnitGrads[] = {
    {"none", FrozenUnitGrads::kNone}, {"sharded", FrozenUnitGrads::kSharded}, {"full", FrozenUnitGrads::kFull}};
inline constexpr Choice<Framework> kFrameworks[] = {
    {"generic", Framework::kGeneric},       {"hf", Framework::kHf},
    {"deepspeed", Framework::kDeepSpeed},   {"torchtune", Framework::kTorchtune},
    {"torchtitan", Framework::kTorchtitan}, {"megatron", Framework::kMegatron},
    {"litgpt", Framework::kLitgpt},         {"custom", Framework::kCustom}};

// The word of a value: the first entry that has it ("?" when none does).
template <typename Enum, size_t N>
const char* name_of(const Choice<Enum> (&choices)[N], Enum value) {
  for (const auto& choice : choices) {
    if (choice.value == value) return choice.name;
  }
  return "?";
}

}  // namespace trainfit::resolving
