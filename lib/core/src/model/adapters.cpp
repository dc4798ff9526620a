// LoRA and QLoRA: a frozen base (no gradients, no optimizer states) and low-rank
// adapters B·A on the target linears, trained like a small model of their own.
// LoRA: Hu et al. 2021 (arXiv 2106.09685); QLoRA: Dettmers et al. 2023 (arXiv 2305.14314),
// NF4 in blocks of 64 with double-quantized absmax (bitsandbytes nn/modules.py Params4bit).
#include <algorithm>
#include <cmath>
#include <vector>

#include "model.h"

namespace trainfit::model {
namespace {

// Which tensor a linear reads: layers that read the same one share it.
enum class Input { kAttention, kAttentionOutput, kMlp, kMlpProduct };

struct Linear {
  double in, out;
  Input input;
};

// The target linears of one layer on this rank (TP splits the output of column-
// parallel and the input of row-parallel layers).
std::vector<Linear> targets(const Config& c) {
  const Geometry& g = c.geo;
  const double t = static_cast<double>(c.tp), h = static_cast<double>(g.hidden);
  const double d = static_cast<double>(g.head_size());
  const double q = static_cast<double>(g.heads) * d / t, kv = std::ceil(static_cast<double>(g.kv_heads) / t) * d;
  const double ffn = static_cast<double>(g.experts > 0 ? g.top_k * g.moe_ffn : g.ffn) / t;
  const uint32_t m = c.lora_modules;
  std::vector<Linear> out;
  if (m & kLoraQ) out.push_back({h, q, Input::kAttention});
  if (m & kLoraK) out.push_back({h, kv, Input::kAttention});
  if (m & kLoraV) out.push_back({h, kv, Input::kAttention});
  if (m & kLoraQkv) out.push_back({h, q + 2.0 * kv, Input::kAttention});
  if (m & kLoraO) out.push_back({q, h, Input::kAttentionOutput});
  // GPT-style MLPs have up (fc1) and down (fc2) only; gate exists in gated (SwiGLU) MLPs.
  if ((m & kLoraGate) && g.mlp == Mlp::kSwiGlu) out.push_back({h, ffn, Input::kMlp});
  if (m & kLoraUp) out.push_back({h, ffn, Input::kMlp});
  if (m & kLoraDown) out.push_back({ffn, h, Input::kMlpProduct});
  return out;
}

// Bytes per frozen base weight of the layers' linears, and of everything else (embeddings,
// norms), by how the base was loaded. GPTQ and AWQ: 4-bit weights with an fp16 scale and a
// packed 4-bit zero point per group of 128 (AutoGPTQ/AutoAWQ defaults, q_group_size=128).
constexpr double kInt4G128BytesPerParam = (4.0 + (16.0 + 4.0) / 128.0) / 8.0;

}  // namespace

void base_bytes(const Config& c, double* linear, double* rest) {
  switch (c.base_dtype) {
    case BaseDtype::kFp32: *linear = *rest = 4.0; return;
    case BaseDtype::kBf16:
    case BaseDtype::kFp16: *linear = *rest = 2.0; return;
    case BaseDtype::kNf4: *linear = kNf4BytesPerParam; *rest = c.kbit_fp32_rest ? 4.0 : 2.0; return;
    case BaseDtype::kGptq:
    case BaseDtype::kAwq: *linear = kInt4G128BytesPerParam; *rest = 2.0; return;
    case BaseDtype::kFollow: break;
  }
  // The frozen base in the parameter dtype (fp32 parameters stay fp32 under autocast).
  *linear = *rest = c.precision == Precision::kFp32 || c.precision == Precision::kBf16Amp ? 4.0 : 2.0;
}

AdapterShape adapter_shape(const Config& c) {
  AdapterShape s;
  if (c.adapter == Adapter::kNone) return s;
  const double r = static_cast<double>(c.lora_rank);
  bool seen[4] = {false, false, false, false};
  const std::vector<Linear> linears = targets(c);
  for (const Linear& l : linears) {
    s.params_per_layer += r * (l.in + l.out);  // A: r x in, B: out x r
    if (c.dora) s.params_per_layer += l.out;    // DoRA's magnitude vector (peft tuners/lora/dora.py)
    s.inputs_per_token += l.in;
    s.outputs_per_token += l.out;
    bool& first = seen[static_cast<int>(l.input)];
    if (!first) s.distinct_inputs_per_token += l.in;
    first = true;
  }
  s.targets = static_cast<double>(linears.size());
  // LoRA on the embedding (PEFT lora.Embedding: A r x vocab, B hidden x r) or the LM head.
  const double V = static_cast<double>(c.geo.vocab), h = static_cast<double>(c.geo.hidden);
  if (c.lora_modules & kLoraEmbedding) s.params_embedding += r * (V + h);
  if (c.lora_modules & kLoraLmHead) s.params_head += r * (V + h);
  // modules_to_save: a trainable copy beside the frozen original (PEFT ModulesToSaveWrapper),
  // in the base's dtype.
  if (c.modules_to_save & kLoraEmbedding) s.saved_embedding = V * h;
  if (c.modules_to_save & kLoraLmHead) s.saved_head = V * h;
  return s;
}

double adapter_trainable(const AdapterShape& shape, const StageParams& p) {
  return shape.params_per_layer * static_cast<double>(p.layers) + (p.first ? shape.params_embedding : 0.0) +
         (p.last ? shape.params_head : 0.0);
}

double modules_saved(const AdapterShape& shape, const StageParams& p) {
  return (p.first ? shape.saved_embedding : 0.0) + (p.last ? shape.saved_head : 0.0);
}

// bitsandbytes keeps each 4-bit weight's QuantState (absmax, the nested absmax, the code) on
// the module, not in a Parameter, so FSDP and ZeRO-3 neither shard nor offload it: every GPU
// holds all of it (bitsandbytes 0.43.0 nn/modules.py Params4bit.to, Linear4bit keeps
// quant_state "for fsdp").
double nf4_quant_state_bytes(const Config& c, const StageParams& p) {
  if (c.base_dtype != BaseDtype::kNf4 || c.bitsandbytes_version.empty()) return 0.0;
  return (kNf4BytesPerParam - 0.5) * p.layer_linear;
}

ModelStates adapter_states(const Config& c, const StageParams& p) {
  const AdapterShape shape = adapter_shape(c);
  const double trainable = adapter_trainable(shape, p);
  const double saved = modules_saved(shape, p);
  double linear_bytes = 0, rest_bytes = 0;
  base_bytes(c, &linear_bytes, &rest_bytes);
  const double base = (p.dense + p.experts - p.layer_linear) * rest_bytes + p.layer_linear * linear_bytes;
  const int64_t group = weights_sharded(c) || c.zero_stage >= 1 ? dense_shard_group(c) : 1;
  auto shard = [&](double bytes, bool sharded) { return sharded ? bytes / static_cast<double>(group) : bytes; };
  ModelStates s;
  const double a = c.adapter_bytes;
  const double quant_state = nf4_quant_state_bytes(c, p);
  s.weights = shard(base - quant_state + trainable * a + saved * rest_bytes, weights_sharded(c)) + quant_state;
  s.grads = shard(trainable * a + saved * rest_bytes, c.zero_stage >= 2);
  if (c.frozen_unit_grads != FrozenUnitGrads::kNone) {
    // The layers' frozen weights share a FlatParameter with their adapters and get gradients
    // of the flat storage's size (config.h FrozenUnitGrads); the embedding and the head sit in
    // a unit of their own that nothing trains in, which gets none.
    const double layer_params =
        p.dense + p.experts - (p.first ? p.embedding : 0.0) - (p.last ? p.head : 0.0);
    const double frozen = p.layer_linear * linear_bytes + (layer_params - p.layer_linear) * rest_bytes;
    s.grads += shard(frozen, c.frozen_unit_grads == FrozenUnitGrads::kSharded);
  }
  // 16-bit adapters under a master-weight regime get an fp32 master; fp32 ones need none.
  s.master = shard(a < 4.0 && (c.precision == Precision::kFp16Amp || c.precision == Precision::kFp8) ? 4.0 * trainable : 0.0,
                   c.zero_stage >= 1);
  // AdamW moments in each parameter's dtype (torch keeps them in the parameter dtype).
  auto moments = [&](double bytes) {
    return c.optimizer == Optimizer::kAdamW ? 2.0 * bytes : c.optimizer == Optimizer::kAdamW8bit ? 2.0 : bytes;
  };
  s.optimizer = shard(trainable * moments(a) + saved * moments(rest_bytes), c.zero_stage >= 1);
  return s;
}

// bitsandbytes' MatMul4Bit before 0.43.2 keeps its input A for backward whenever an input needs
// a gradient (bitsandbytes/autograd/_functions.py MatMul4Bit.forward: ctx.tensors = (A, B)), cast to the
// compute dtype (nn/modules.py Linear4bit.forward): per layer the attention norm's output (read
// by q, k, v), the attention output (o), the MLP norm's output (gate, up) and the MLP product
// (down). Where lora_A reads the base input itself, those storages are counted there already.
double nf4_saved_inputs_bytes(const Config& c) {
  const Geometry& g = c.geo;
  if (!c.nf4_saves_input || g.experts > 0) return 0.0;
  const double t = static_cast<double>(c.tp), r = sp_divisor(c);
  const double h = static_cast<double>(g.hidden), q = static_cast<double>(g.heads * g.head_size());
  const double widths = 2.0 * h / r + (q + static_cast<double>(g.ffn)) / t;
  double bytes = gemm_input_bytes(c) * tokens(c) * widths;
  const bool adapter_reads_base_input = c.lora_dropout == 0.0 && c.precision != Precision::kBf16Amp &&
                                        !c.adapter_autocast && c.adapter_bytes <= act_bytes(c);
  if (adapter_reads_base_input) bytes -= act_bytes(c) * tokens(c) * adapter_shape(c).distinct_inputs_per_token;
  return std::max(0.0, bytes);
}

// Neither NF4 kernel multiplies by the packed weight: each dequantizes the whole weight to the
// compute dtype first, in forward and again for the input's gradient in backward
// (bitsandbytes autograd/_functions.py MatMul4Bit: F.dequantize_4bit(B, state).to(A.dtype);
// torchao dtypes/nf4tensor.py linear_nf4: weight.to(input.dtype)). The largest is the MLP's.
double nf4_dequantized_weight_bytes(const Config& c) {
  if (c.base_dtype != BaseDtype::kNf4) return 0.0;
  const Geometry& g = c.geo;
  const double ffn = g.experts > 0 ? static_cast<double>(g.moe_ffn) : static_cast<double>(g.ffn);
  const double widest = std::max({ffn, static_cast<double>(g.heads * g.head_size()), static_cast<double>(g.hidden)});
  return act_bytes(c) * static_cast<double>(g.hidden) * widest / static_cast<double>(c.tp);
}

double adapter_activation_bytes(const Config& c) {
  if (c.adapter == Adapter::kNone) return 0.0;
  const AdapterShape shape = adapter_shape(c);
  const double T = tokens(c), A = act_bytes(c);
  // What torch saves (measured in tests/fidelity): lora_B its rank-r input per target;
  // lora_A its input as its matmul sees it — under autocast a 16-bit cast per target,
  // with fp32 adapters on a 16-bit model an fp32 copy per target (PEFT casts x to the
  // adapter dtype), else the base layer's input itself, once per distinct input.
  double bytes = shape.targets * T * static_cast<double>(c.lora_rank) * A;
  // DoRA (peft tuners/lora/dora.py DoraLinearLayer.forward): the scale multiplies the base
  // result and the LoRA result, so both, out-wide, are saved per target. Measured on an H200
  // (tests/fidelity/hf_stack.py): +286 MiB over LoRA for 2 x 9216 x 2048 x 4 x 2 bytes = 288 MiB.
  if (c.dora) bytes += 2.0 * A * T * shape.outputs_per_token;
  if (c.lora_dropout > 0.0) {
    // Dropout gives each target its own input: a 1-byte mask and the dropped-out copy.
    const double input = c.precision == Precision::kBf16Amp || c.adapter_autocast ? gemm_input_bytes(c) : std::max(A, c.adapter_bytes);
    return bytes + (1.0 + input) * T * shape.inputs_per_token;
  }
  if (c.precision == Precision::kBf16Amp || c.adapter_autocast) {
    bytes += gemm_input_bytes(c) * T * shape.inputs_per_token;
  } else if (c.adapter_bytes > A) {
    bytes += c.adapter_bytes * T * shape.inputs_per_token;
  } else {
    bytes += A * T * shape.distinct_inputs_per_token;
  }
  return bytes;
}

}  // namespace trainfit::model
