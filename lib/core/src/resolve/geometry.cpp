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
  } else if (r.model_label) {
    const std::string& label = *r.model_label;
    bool printable = !label.empty() && label.size() <= 100;
    for (char ch : label) printable = printable && static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f;
    if (!printable) return invalid("model_label", "'" + label.substr(0, 40) + "'", "text of 1 to 100 printable characters");
    c.model_label = label;
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
      !take_int(r.kv_lora_rank, "kv_lora_rank", 1, kMaxDim, &g.kv_lora_rank, &e) ||
      !take_int(r.q_lora_rank, "q_lora_rank", 0, kMaxDim, &g.q_lora_rank, &e) ||
      !take_int(r.rope_head_dim, "rope_head_dim", 1, kMaxDim, &g.rope_head_dim, &e) ||
      !take_int(r.v_head_dim, "v_head_dim", 1, kMaxDim, &g.v_head_dim, &e) ||
      !take_int(r.shared_ffn_hidden, "shared_ffn_hidden", 0, int64_t{1} << 24, &g.shared_ffn, &e) ||
      !take_int(r.dense_layers, "dense_layers", 0, 100000, &g.dense_layers, &e) ||
      !take_enum(r.mlp, "mlp", kMlps, &g.mlp, &e) || !take_enum(r.norm, "norm", kNorms, &g.norm, &e) ||
      !take_enum(r.bias, "bias", kBiases, &g.bias, &e)) {
    return e;
  }
  if (r.tied_embeddings) g.tied = *r.tied_embeddings;
  if (r.dropout) g.dropout = *r.dropout;
  if (r.qk_norm) g.qk_norm = *r.qk_norm;
  if (r.sandwich_norm) g.sandwich_norm = *r.sandwich_norm;
  if (r.qk_norm_full) g.qk_norm_full = *r.qk_norm_full;
  if (r.shared_expert_gate) g.shared_expert_gate = *r.shared_expert_gate;
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
  if (g.kv_lora_rank > 0) {
    // MLA decompresses a key and a value per query head (DeepseekV3Attention kv_b_proj).
    if (r.num_kv_heads && *r.num_kv_heads != g.heads) {
      return invalid("num_kv_heads", std::to_string(*r.num_kv_heads),
                     "num_heads=" + std::to_string(g.heads) + " with kv_lora_rank (latent attention has a key and value per head)");
    }
    g.kv_heads = g.heads;
    if (g.rope_head_dim == 0 || g.rope_head_dim >= g.head_size()) {
      return invalid("rope_head_dim", std::to_string(g.rope_head_dim),
                     "an integer from 1 to head_dim-1=" + std::to_string(g.head_size() - 1) + " with kv_lora_rank");
    }
    notes.push_back("multi-head latent attention: parameters per modeling_deepseek_v3.py DeepseekV3Attention; "
                    "activations keep q, k and v per head after decompression and the two latents with their norms");
  } else if (g.q_lora_rank > 0 || g.rope_head_dim > 0 || g.v_head_dim > 0) {
    const char* field = g.q_lora_rank > 0 ? "q_lora_rank" : g.rope_head_dim > 0 ? "rope_head_dim" : "v_head_dim";
    const int64_t value = g.q_lora_rank > 0 ? g.q_lora_rank : g.rope_head_dim > 0 ? g.rope_head_dim : g.v_head_dim;
    return invalid(field, std::to_string(value), "unset without kv_lora_rank (it describes multi-head latent attention)");
  }
  if (g.experts == 0 && (g.shared_ffn > 0 || g.dense_layers > 0 || g.shared_expert_gate)) {
    const char* field = g.shared_ffn > 0 ? "shared_ffn_hidden" : g.dense_layers > 0 ? "dense_layers" : "shared_expert_gate";
    return invalid(field, field == std::string("shared_expert_gate") ? "true" : std::to_string(g.shared_ffn > 0 ? g.shared_ffn : g.dense_layers),
                   "0/false without num_experts (they describe a mixture of experts)");
  }
  if (g.dense_layers >= g.layers && g.experts > 0) {
    return invalid("dense_layers", std::to_string(g.dense_layers), "an integer from 0 to num_layers-1=" + std::to_string(g.layers - 1));
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

namespace trainfit {

std::string model_text(const Config& c) {
  if (!c.model_name.empty()) return c.model_name;
  if (!c.model_label.empty()) return c.model_label;
  return "custom model (" + std::to_string(c.geo.layers) + " layers, hidden " + std::to_string(c.geo.hidden) + ")";
}

}  // namespace trainfit
