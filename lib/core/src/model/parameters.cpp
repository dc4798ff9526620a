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

// Multi-head latent attention (transformers v4.51.0 models/deepseek_v3/modeling_deepseek_v3.py
// DeepseekV3Attention; deepseek_v2 the same): q_a_proj h x q_lora, q_a_layernorm, q_b_proj
// q_lora x heads*(nope+rope) (or q_proj h x heads*(nope+rope) without q_lora_rank);
// kv_a_proj_with_mqa h x (kv_lora + rope), kv_a_layernorm, kv_b_proj kv_lora x heads*(nope+v);
// o_proj heads*v x h; no biases. The down projections and their norms are whole on every TP
// rank (Megatron-LM core multi_latent_attention.py: linear_q/kv_down_proj duplicated).
double latent_attention_params(const Geometry& g, double q_heads) {
  const double h = static_cast<double>(g.hidden), d = static_cast<double>(g.head_size());
  const double rope = static_cast<double>(g.rope_head_dim), v = static_cast<double>(g.value_head_size());
  const double q_rank = static_cast<double>(g.q_lora_rank), kv_rank = static_cast<double>(g.kv_lora_rank);
  double params = q_rank > 0 ? h * q_rank + q_rank + q_rank * q_heads * d : h * q_heads * d;
  params += h * (kv_rank + rope) + kv_rank;
  params += kv_rank * q_heads * (d - rope + v);
  return params + q_heads * v * h;
}

// Attention linears of one layer; kv_heads_on_rank lets TP replicate KV heads when g < t.
double attention_params(const Geometry& g, double q_heads, double kv_heads) {
  if (g.kv_lora_rank > 0) return latent_attention_params(g, q_heads);
  const double h = static_cast<double>(g.hidden);
  const double d = static_cast<double>(g.head_size());  // head_dim may differ from h/a (Gemma, Mistral-NeMo)
  double params = 2.0 * h * q_heads * d + 2.0 * h * kv_heads * d;  // q, o and k, v
  // q_norm, k_norm weights: one head_dim each (HF Qwen3Attention, Gemma3Attention), or over the
  // whole projections (transformers v4.51.0 models/olmo2/modeling_olmo2.py Olmo2Attention:
  // RMSNorm(num_attention_heads * head_dim), RMSNorm(num_key_value_heads * head_dim)).
  if (g.qk_norm) params += g.qk_norm_full ? (q_heads + kv_heads) * d : 2.0 * d;
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

// What an MoE layer holds besides its routed experts: the router (h x E), the shared experts
// (one gated MLP of shared_ffn: Qwen2-MoE's shared_expert of shared_expert_intermediate_size,
// DeepSeek's shared_experts of moe_intermediate_size * n_shared_experts) and Qwen2-MoE's
// shared_expert_gate h x 1 (transformers v4.51.0 models/qwen2_moe/modeling_qwen2_moe.py
// Qwen2MoeSparseMoeBlock; models/deepseek_v3/modeling_deepseek_v3.py DeepseekV3MoE). The
// shared experts split over TP like a dense MLP (t); the router and the gate are whole.
double moe_router_params(const Geometry& g) {
  return static_cast<double>(g.hidden) * (static_cast<double>(g.experts) + (g.shared_expert_gate ? 1.0 : 0.0));
}
double shared_expert_params(const Geometry& g) {
  return g.shared_ffn > 0 ? mlp_params(g, static_cast<double>(g.shared_ffn)) : 0.0;
}

}  // namespace

ParamCounts count_parameters(const Geometry& g) {
  ParamCounts p;
  const double h = static_cast<double>(g.hidden);
  p.embedding = static_cast<double>(g.vocab) * h + static_cast<double>(g.learned_positions) * h;
  p.lm_head = g.tied ? 0.0 : static_cast<double>(g.vocab) * h;
  p.final_norm = norm_params(g);
  const bool moe = g.experts > 0;
  const double attention_and_norms = attention_params(g, static_cast<double>(g.heads), static_cast<double>(g.kv_heads)) +
                                     (g.sandwich_norm ? 4.0 : 2.0) * norm_params(g);  // Gemma 2/3: pre and post norms
  const double dense_mlp = mlp_params(g, static_cast<double>(g.ffn));
  p.per_layer = attention_and_norms + (moe ? moe_router_params(g) + shared_expert_params(g) : dense_mlp);
  p.per_layer_experts = moe ? static_cast<double>(g.experts) * mlp_params(g, static_cast<double>(g.moe_ffn)) : 0.0;
  // MoE models may keep their first layers dense (DeepSeek first_k_dense_replace).
  const double moe_layers = static_cast<double>(g.moe_layers());
  const double dense_layers = static_cast<double>(g.layers) - (moe ? moe_layers : 0.0);
  p.total = p.embedding + p.lm_head + p.final_norm + (moe ? moe_layers * (p.per_layer + p.per_layer_experts) : 0.0) +
            dense_layers * (attention_and_norms + dense_mlp);
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
  const double dense_mlp = mlp_params(g, static_cast<double>(g.ffn)) / t;
  const double mlp = moe ? shared_expert_params(g) / t : dense_mlp;
  const double replicated = (g.sandwich_norm ? 4.0 : 2.0) * norm_params(g) + (moe ? moe_router_params(g) : 0.0);
  const double experts_on_rank =
      moe ? static_cast<double>(g.experts) / static_cast<double>(c.ep) * mlp_params(g, static_cast<double>(g.moe_ffn)) / t
          : 0.0;
  const double layer_dense = attn + mlp + replicated;
  // The leading dense layers of an MoE model sit on the first stage; the rest are MoE layers.
  const double dense_here =
      moe && first ? static_cast<double>(std::min(g.layers - g.moe_layers(), s.layers)) : 0.0;
  const double L = static_cast<double>(s.layers) - dense_here;
  const double dense_layer = attn + dense_mlp + (g.sandwich_norm ? 4.0 : 2.0) * norm_params(g);
  s.dense = L * layer_dense + dense_here * dense_layer;
  s.per_layer = layer_dense + experts_on_rank;
  s.experts = L * experts_on_rank;
  s.linear = L * (attn + mlp + experts_on_rank) + dense_here * (attn + dense_mlp);
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
