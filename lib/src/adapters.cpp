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
  std::vector<Linear> out = {{h, q, Input::kAttention}, {h, kv, Input::kAttention}};  // q_proj, v_proj
  if (c.lora_targets == LoraTargets::kQv) return out;
  out.push_back({h, kv, Input::kAttention});      // k_proj
  out.push_back({q, h, Input::kAttentionOutput});  // o_proj
  if (c.lora_targets == LoraTargets::kAttention) return out;
  out.push_back({h, ffn, Input::kMlp});         // up (fc1)
  out.push_back({ffn, h, Input::kMlpProduct});  // down (fc2)
  if (g.mlp == Mlp::kSwiGlu) out.push_back({h, ffn, Input::kMlp});  // gate
  return out;
}

}  // namespace

AdapterShape adapter_shape(const Config& c) {
  AdapterShape s;
  if (c.adapter == Adapter::kNone) return s;
  const double r = static_cast<double>(c.lora_rank);
  bool seen[4] = {false, false, false, false};
  for (const Linear& l : targets(c)) {
    s.params_per_layer += r * (l.in + l.out);  // A: r x in, B: out x r
    s.inputs_per_token += l.in;
    bool& first = seen[static_cast<int>(l.input)];
    if (!first) s.distinct_inputs_per_token += l.in;
    first = true;
  }
  s.targets = static_cast<double>(targets(c).size());
  return s;
}

ModelStates adapter_states(const Config& c, const StageParams& p) {
  const AdapterShape shape = adapter_shape(c);
  const double trainable = shape.params_per_layer * static_cast<double>(p.layers);
  // The frozen base in the compute dtype (fp32 parameters stay fp32 under autocast);
  // QLoRA stores the layers' linear weights as NF4, the rest in 16-bit.
  const double base_bytes = c.precision == Precision::kFp32 || c.precision == Precision::kBf16Amp ? 4.0 : 2.0;
  double base = (p.dense + p.experts) * base_bytes;
  if (c.adapter == Adapter::kQlora) base = (p.dense + p.experts - p.layer_linear) * 2.0 + p.layer_linear * kNf4BytesPerParam;
  const int64_t group = weights_sharded(c) || c.zero_stage >= 1 ? dense_shard_group(c) : 1;
  auto shard = [&](double bytes, bool sharded) { return sharded ? bytes / static_cast<double>(group) : bytes; };
  ModelStates s;
  const double a = c.adapter_bytes;
  s.weights = shard(base + trainable * a, weights_sharded(c));
  s.grads = shard(trainable * a, c.zero_stage >= 2);
  // 16-bit adapters under a master-weight regime get an fp32 master; fp32 ones need none.
  s.master = shard(a < 4.0 && (c.precision == Precision::kFp16Amp || c.precision == Precision::kFp8) ? 4.0 * trainable : 0.0,
                   c.zero_stage >= 1);
  // AdamW moments in the adapters' dtype (torch keeps them in the parameter dtype).
  const double moments = c.optimizer == Optimizer::kAdamW ? 2.0 * a : c.optimizer == Optimizer::kAdamW8bit ? 2.0 : a;
  s.optimizer = shard(trainable * moments, c.zero_stage >= 1);
  return s;
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
  if (c.lora_dropout > 0.0) {
    // Dropout gives each target its own input: a 1-byte mask and the dropped-out copy.
    const double input = c.precision == Precision::kBf16Amp ? gemm_input_bytes(c) : std::max(A, c.adapter_bytes);
    return bytes + (1.0 + input) * T * shape.inputs_per_token;
  }
  if (c.precision == Precision::kBf16Amp) {
    bytes += gemm_input_bytes(c) * T * shape.inputs_per_token;
  } else if (c.adapter_bytes > A) {
    bytes += c.adapter_bytes * T * shape.inputs_per_token;
  } else {
    bytes += A * T * shape.distinct_inputs_per_token;
  }
  return bytes;
}

}  // namespace trainfit::model
