// Resolve step 1: the model geometry, from a catalog preset and explicit fields.
#include <cmath>

#include "choices.h"
#include "enum_names.h"
#include "steps.h"
#include "trainfit/catalog.h"

namespace trainfit::resolving {
namespace {

constexpr Choice<Bias> kBiases[] = {{"none", Bias::kNone}, {"qkv", Bias::kQkv}, {"all", Bias::kAll}};

// Default FFN size for a custom geometry: solved from the parameter count when
// given (per layer: attention 2h^2(1 + g/a), MLP 3hF or 2hF, two norms; embeddings
// apart), else Llama's 8h/3 rule rounded up to 256 (torchtitan llama3 ModelArgs:
// int(2*4*dim/3), multiple_of).
int64_t default_ffn(const Geometry& g, double total_params) {
  const double h = static_cast<double>(g.hidden);
  const double attn = h * h * (2.0 + 2.0 * static_cast<double>(g.kv_heads) / static_cast<double>(g.heads));
  const double embed = static_cast<double>(g.vocab) * h * (g.tied ? 1.0 : 2.0);
  const double mats = g.mlp == Mlp::kSwiGlu ? 3.0 : 2.0;
  if (total_params > 0) {
    const double per_layer = (total_params - embed) / static_cast<double>(g.layers);
    const double ffn = (per_layer - attn - 2.0 * h) / (mats * h);
    if (ffn >= h / 2) return static_cast<int64_t>(std::ceil(ffn / 256.0) * 256.0);
  }
  const double rule = g.mlp == Mlp::kSwiGlu ? 8.0 * h / 3.0 : 4.0 * h;
  return static_cast<int64_t>(std::ceil(rule / 256.0) * 256.0);
}

// A custom geometry needs at least the seed's reduced description; the rest is filled.
Result<bool> fill_custom_geometry(const Request& r, Geometry& g, Notes& notes) {
  if (g.layers == 0 || g.hidden == 0) {
    return make_error(ErrorCode::kMissing, g.layers == 0 ? "num_layers" : "hidden_dim",
                      "no model geometry: give model (a catalog name), an HF config, or num_layers and "
                      "hidden_dim (with model_params_b)");
  }
  if (g.heads == 0) {
    g.heads = g.hidden % 128 == 0 ? g.hidden / 128 : g.hidden % 64 == 0 ? g.hidden / 64 : 1;
    notes.push_back("num_heads=" + std::to_string(g.heads) + " (head dim 128, else 64)");
  }
  if (g.kv_heads == 0) {
    g.kv_heads = g.heads;
    notes.push_back("num_kv_heads=num_heads (multi-head attention)");
  }
  if (g.vocab == 0) {
    g.vocab = 32000;
    notes.push_back("vocab_size=32000 (Llama-2 tokenizer)");
  }
  if (!r.tied_embeddings) notes.push_back("untied embeddings");
  if (!r.mlp) notes.push_back(std::string("mlp=") + to_string(g.mlp));
  if (!r.norm) notes.push_back(std::string("norm=") + to_string(g.norm));
  if (g.ffn == 0) {
    g.ffn = default_ffn(g, g.params_override);
    notes.push_back("ffn_hidden=" + std::to_string(g.ffn) +
                    (g.params_override > 0 ? " (solved from model_params_b)" : " (8h/3 SwiGLU rule)"));
  }
  return true;
}

}  // namespace

Result<bool> resolve_geometry(const Request& r, Config* config, Notes* notes_out) {
  Config& c = *config;
  Geometry& g = c.geo;
  Notes& notes = *notes_out;
  Error e;
  if (r.model) {
    Result<const ModelPreset*> preset = find_model(*r.model);
    if (!preset) return preset.error();
    g = (*preset)->geometry;
    c.model_name = (*preset)->name;
  }
  if (!take_int(r.num_layers, "num_layers", 1, 100000, &g.layers, &e) ||
      !take_int(r.hidden_dim, "hidden_dim", 1, kMaxDim, &g.hidden, &e) ||
      !take_int(r.num_heads, "num_heads", 1, kMaxDim, &g.heads, &e) ||
      !take_int(r.num_kv_heads, "num_kv_heads", 1, kMaxDim, &g.kv_heads, &e) ||
      !take_int(r.ffn_hidden, "ffn_hidden", 1, int64_t{1} << 24, &g.ffn, &e) ||
      !take_int(r.vocab_size, "vocab_size", 1, int64_t{1} << 24, &g.vocab, &e) ||
      !take_int(r.learned_positions, "learned_positions", 0, kMaxSeq, &g.learned_positions, &e) ||
      !take_int(r.num_experts, "num_experts", 0, 65536, &g.experts, &e) ||
      !take_int(r.experts_per_token, "experts_per_token", 1, 65536, &g.top_k, &e) ||
      !take_int(r.moe_ffn_hidden, "moe_ffn_hidden", 1, int64_t{1} << 24, &g.moe_ffn, &e) ||
      !take_int(r.head_dim, "head_dim", 1, kMaxDim, &g.head_dim, &e) ||
      !take_enum(r.mlp, "mlp", kMlps, &g.mlp, &e) || !take_enum(r.norm, "norm", kNorms, &g.norm, &e) ||
      !take_enum(r.bias, "bias", kBiases, &g.bias, &e)) {
    return e;
  }
  if (r.tied_embeddings) g.tied = *r.tied_embeddings;
  if (r.dropout) g.dropout = *r.dropout;
  if (r.qk_norm) g.qk_norm = *r.qk_norm;
  if (r.sandwich_norm) g.sandwich_norm = *r.sandwich_norm;
  if (r.model_params_b) {
    if (!(*r.model_params_b > 0 && *r.model_params_b <= 100000)) {
      return invalid("model_params_b", num(*r.model_params_b), "number > 0 and <= 100000 (billions)");
    }
    g.params_override = *r.model_params_b * 1e9;
  }

  if (!r.model) {
    Result<bool> filled = fill_custom_geometry(r, g, notes);
    if (!filled) return filled;
  }
  if (g.head_dim == 0 && g.hidden % g.heads != 0) {
    return invalid("num_heads", std::to_string(g.heads),
                   "a divisor of hidden_dim=" + std::to_string(g.hidden) + " (or give head_dim)");
  }
  if (g.heads % g.kv_heads != 0) {
    return invalid("num_kv_heads", std::to_string(g.kv_heads), "a divisor of num_heads=" + std::to_string(g.heads));
  }
  if (g.experts > 0) {
    if (g.top_k == 0) g.top_k = 2;
    if (g.moe_ffn == 0) g.moe_ffn = g.ffn;
    if (g.top_k > g.experts) {
      return invalid("experts_per_token", std::to_string(g.top_k),
                     "an integer from 1 to num_experts=" + std::to_string(g.experts));
    }
  }

  return true;
}

}  // namespace trainfit::resolving
