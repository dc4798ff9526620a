// Names of the resolved choices, as the response and the CLI print them.
#include "trainfit/config.h"

namespace trainfit {

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
  switch (v) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    case Recompute::kOp: return "op";
  }
  return "?";
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
    case Sharding::kZeroRedundancy: return "zero-redundancy";
  }
  return "?";
}
const char* to_string(Mlp v) { return v == Mlp::kSwiGlu ? "swiglu" : "gelu"; }
const char* to_string(Norm v) { return v == Norm::kRmsNorm ? "rmsnorm" : "layernorm"; }

const char* to_string(Framework v) {
  switch (v) {
    case Framework::kGeneric: return "generic";
    case Framework::kHf: return "hf";
    case Framework::kDeepSpeed: return "deepspeed";
    case Framework::kTorchtune: return "torchtune";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kMegatron: return "megatron";
    case Framework::kLitgpt: return "litgpt";
    case Framework::kCustom: return "custom";
  }
  return "?";
}
const char* to_string(Adapter v) { return v == Adapter::kNone ? "none" : v == Adapter::kLora ? "lora" : "qlora"; }

const char* to_string(BaseDtype v) {
  switch (v) {
    case BaseDtype::kFollow: return "follow";
    case BaseDtype::kFp32: return "fp32";
    case BaseDtype::kBf16: return "bf16";
    case BaseDtype::kFp16: return "fp16";
    case BaseDtype::kNf4: return "nf4";
    case BaseDtype::kGptq: return "gptq";
    case BaseDtype::kAwq: return "awq";
  }
  return "?";
}

}  // namespace trainfit
