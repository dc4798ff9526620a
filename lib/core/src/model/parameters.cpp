// Parameter counts from the geometry. Layout per Megatron-LM
// theoretical_memory_usage.py (attention 2h^2(1+g/a), gated MLP x3/2, norms,
// router h*E, embedding h*V, x2 untied) plus biases and learned positions
// (GPT-2: HF modeling_gpt2.py). Checked against exact published counts in tests.
#include <algorithm>
#include <cmath>

#include "model.h"

namespace trainfit {
namespace {

double norm_params(const Geometry& g) {
  return (g.norm == Norm::kLayerNorm ? 2.0 : 1.0) * static_cast<double>(g.hidden);  // gamma (+ beta)
}

// Attention linears of one layer; kv_heads_on_rank lets TP replicate KV heads when g < t.
double attention_params(const Geometry& g, double q_heads, double kv_heads) {
  const double h = static_cast<double>(g.hidden);
  const double d = static_cast<double>(g.head_size());  // head_dim may differ from h/a (Gemma, Mistral-NeMo)
  double params = 2.0 * h * q_heads * d + 2.0 * h * kv_heads * d;  // q, o and k, v
  if (g.qk_norm) params += 2.0 * d;  // q_norm, k_norm weights (HF Qwen3Attention, Gemma3Attention)
  if (g.bias != Bias::kNone) params += q_heads * d + 2.0 * kv_heads * d;  // q/k/v biases
  if (g.bias == Bias::kAll) params += h;                                   // o bias
  return params;
}

double mlp_params(const Geometry& g, double ffn) {
  const double h = static_cast<double>(g.hidden);
  const double mats = g.mlp == Mlp::kSwiGlu ? 3.0 : 2.0;  // gate+up+down vs fc1+fc2
  double params = mats * h * ffn;
  if (g.bias == Bias::kAll) params += (mats - 1.0) * ffn + h;
  return params;
}

}  // namespace

ParamCounts count_parameters(const Geometry& g) {
  ParamCounts p;
  const double h = static_cast<double>(g.hidden);
  p.embedding = static_cast<double>(g.vocab) * h + static_cast<double>(g.learned_positions) * h;
  p.lm_head = g.tied ? 0.0 : static_cast<double>(g.vocab) * h;
  p.final_norm = norm_params(g);
  const bool moe = g.experts > 0;
  p.per_layer = attention_params(g, static_cast<double>(g.heads), static_cast<double>(g.kv_heads)) +
                (g.sandwich_norm ? 4.0 : 2.0) * norm_params(g) +  // Gemma 2/3: pre and post norms
                (moe ? h * static_cast<double>(g.experts) : mlp_params(g, static_cast<double>(g.ffn)));
  p.per_layer_experts = moe ? static_cast<double>(g.experts) * mlp_params(g, static_cast<double>(g.moe_ffn)) : 0.0;
  p.total = p.embedding + p.lm_head + p.final_norm +
            static_cast<double>(g.layers) * (p.per_layer + p.per_layer_experts);
  return p;
}

namespace model {

StageParams stage_params(const Config& c, bool first, bool last) {
  const Geometry& g = c.geo;
  const double t = static_cast<double>(c.tp);
  const double h = static_cast<double>(g.hidden);
  StageParams s;
  s.first = first;
  s.last = last;
  s.layers = (g.layers + c.pp - 1) / c.pp;  // the fuller stage when L % p != 0
  // TP splits attention heads and the MLP; KV heads are replicated when g < t (Megatron).
  const double kv_on_rank = std::ceil(static_cast<double>(g.kv_heads) / t);
  const double attn = attention_params(g, static_cast<double>(g.heads) / t, kv_on_rank);
  const bool moe = g.experts > 0;
  const double mlp = moe ? 0.0 : mlp_params(g, static_cast<double>(g.ffn)) / t;
  const double replicated = (g.sandwich_norm ? 4.0 : 2.0) * norm_params(g) + (moe ? h * static_cast<double>(g.experts) : 0.0);
  const double experts_on_rank =
      moe ? static_cast<double>(g.experts) / static_cast<double>(c.ep) * mlp_params(g, static_cast<double>(g.moe_ffn)) / t
          : 0.0;
  const double layer_dense = attn + mlp + replicated;
  const double L = static_cast<double>(s.layers);
  s.dense = L * layer_dense;
  s.per_layer = layer_dense + experts_on_rank;
  s.experts = L * experts_on_rank;
  s.linear = L * (attn + mlp + experts_on_rank);
  s.layer_linear = s.linear;
  s.largest_unit = layer_dense + experts_on_rank;
  // Largest matrix of a layer: an MLP projection, a q/o projection, or one expert's.
  s.largest_tensor = std::max(h * (moe ? static_cast<double>(g.moe_ffn) : static_cast<double>(g.ffn)) / t, h * h / t);
  // Vocab-parallel embedding and LM head (Megatron VocabParallelEmbedding): V*h/t each.
  const double vocab_rows = static_cast<double>(g.vocab) * h / t;
  const double positions = static_cast<double>(g.learned_positions) * h;
  if (first) {
    s.dense += vocab_rows + positions;
    s.embedding = vocab_rows + positions;
    s.largest_unit = std::max(s.largest_unit, vocab_rows + positions);
    s.largest_tensor = std::max(s.largest_tensor, vocab_rows);
  }
  if (last) {
    s.dense += norm_params(g);
    // Untied: its own LM head. Tied with p > 1: the last stage keeps a copy of the embedding.
    if (!g.tied || !first) s.dense += vocab_rows;
    s.head = vocab_rows + norm_params(g);
    s.linear += vocab_rows;
    s.largest_unit = std::max(s.largest_unit, vocab_rows);
    s.largest_tensor = std::max(s.largest_tensor, vocab_rows);
  }
  // model_params_b overrides the geometry's count: scale every part alike.
  if (g.params_override > 0) {
    const double scale = g.params_override / count_parameters(g).total;
    s.dense *= scale;
    s.experts *= scale;
    s.linear *= scale;
    s.layer_linear *= scale;
    s.largest_unit *= scale;
    s.largest_tensor *= scale;
    s.head *= scale;
    s.embedding *= scale;
    s.per_layer *= scale;
  }
  return s;
}

}  // namespace model
}  // namespace trainfit
