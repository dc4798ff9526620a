// Hugging Face config.json -> Geometry. Per-family key names follow
// transformers' configuration_{llama,mistral,mixtral,qwen2,gpt2}.py.
#include <nlohmann/json.hpp>

#include "trainfit/catalog.h"

namespace trainfit {
namespace {

using nlohmann::json;

Error hf_error(const std::string& message) {
  return make_error(ErrorCode::kInvalidValue, "hf_config", "hf config: " + message);
}

// Reads a positive integer field; 0 when absent or null.
bool read_int(const json& doc, const char* key, int64_t* out, std::string* problem) {
  if (!doc.contains(key) || doc[key].is_null()) return true;
  const json& value = doc[key];
  if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
    *problem = std::string("'") + key + "' must be a positive integer, got " + value.dump();
    return false;
  }
  *out = value.get<int64_t>();
  return true;
}

}  // namespace

Result<Geometry> geometry_from_hf_config(const std::string& text) {
  try {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      return hf_error("malformed JSON at byte " + std::to_string(e.byte));
    }
    if (!doc.is_object()) return hf_error("top level must be a JSON object");
    const std::string type = doc.value("model_type", "");
    Geometry g;
    std::string problem;
    if (type == "gpt2") {
      // GPT2Config: n_embd, n_layer, n_head, n_inner (None -> 4*n_embd), tied, learned positions.
      int64_t inner = 0;
      if (!read_int(doc, "n_embd", &g.hidden, &problem) || !read_int(doc, "n_layer", &g.layers, &problem) ||
          !read_int(doc, "n_head", &g.heads, &problem) || !read_int(doc, "n_inner", &inner, &problem) ||
          !read_int(doc, "vocab_size", &g.vocab, &problem) ||
          !read_int(doc, "n_positions", &g.learned_positions, &problem)) {
        return hf_error(problem);
      }
      g.kv_heads = g.heads;
      g.ffn = inner > 0 ? inner : 4 * g.hidden;
      g.mlp = Mlp::kGelu;
      g.norm = Norm::kLayerNorm;
      g.bias = Bias::kAll;
      g.tied = doc.value("tie_word_embeddings", true);
      g.dropout = doc.value("resid_pdrop", 0.1) > 0.0;
      if (g.learned_positions == 0) g.learned_positions = 1024;
    } else if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" ||
               type.empty()) {
      if (!read_int(doc, "hidden_size", &g.hidden, &problem) ||
          !read_int(doc, "num_hidden_layers", &g.layers, &problem) ||
          !read_int(doc, "num_attention_heads", &g.heads, &problem) ||
          !read_int(doc, "num_key_value_heads", &g.kv_heads, &problem) ||
          !read_int(doc, "intermediate_size", &g.ffn, &problem) ||
          !read_int(doc, "vocab_size", &g.vocab, &problem) ||
          !read_int(doc, "num_local_experts", &g.experts, &problem) ||
          !read_int(doc, "num_experts_per_tok", &g.top_k, &problem)) {
        return hf_error(problem);
      }
      if (g.kv_heads == 0) g.kv_heads = g.heads;  // absent num_key_value_heads means MHA
      const std::string act = doc.value("hidden_act", "silu");
      g.mlp = (act == "silu" || act == "swish") ? Mlp::kSwiGlu : Mlp::kGelu;
      g.norm = Norm::kRmsNorm;
      g.tied = doc.value("tie_word_embeddings", false);
      // Qwen2 always has q/k/v biases; Llama has them when attention_bias is set.
      g.bias = (type == "qwen2" || doc.value("attention_bias", false)) ? Bias::kQkv : Bias::kNone;
      if (g.experts > 0) {
        g.moe_ffn = g.ffn;
        if (g.top_k == 0) g.top_k = 2;
      }
    } else {
      return hf_error("model_type '" + type + "' is not supported; accepted: llama, mistral, mixtral, qwen2, gpt2");
    }
    if (g.hidden == 0 || g.layers == 0 || g.heads == 0 || g.vocab == 0 || g.ffn == 0) {
      return hf_error("missing one of the hidden size, layer count, head count, vocab size or MLP size");
    }
    return g;
  } catch (const std::exception& e) {
    return hf_error(std::string("unexpected value type: ") + e.what());
  }
}

}  // namespace trainfit
