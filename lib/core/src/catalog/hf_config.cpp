// Hugging Face config.json -> Geometry. Per-family key names and defaults follow transformers'
// configuration_{llama,mistral,mixtral,qwen2,qwen3,qwen3_moe,gemma,gemma2,gemma3,gpt2}.py; the
// parameters each family's modules hold follow the matching modeling_*.py (cited per family).
#include <nlohmann/json.hpp>

#include "../json/parse_errors.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace {

using nlohmann::json;

Error hf_error(const std::string& message) {
  Error e = make_error(ErrorCode::kInvalidValue, "hf_config", "hf config: " + message);
  e.reason = message;  // without "hf config: ", for a face that names the file itself
  return e;
}

// Reads a positive integer field; leaves *out as it is when absent or null.
Result<bool> read_int(const json& doc, const char* key, int64_t* out) {
  if (!doc.contains(key) || doc[key].is_null()) return true;
  const json& value = doc[key];
  if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
    return hf_error(std::string("'") + key + "' must be a positive integer, got " + value.dump());
  }
  *out = value.get<int64_t>();
  return true;
}

// Reads a boolean field; leaves *out as it is (the family's default) when absent or null.
Result<bool> read_bool(const json& doc, const char* key, bool* out) {
  if (!doc.contains(key) || doc[key].is_null()) return true;
  if (!doc[key].is_boolean()) return hf_error(std::string("'") + key + "' must be true or false, got " + doc[key].dump());
  *out = doc[key].get<bool>();
  return true;
}

// A string field ("" when absent or null).
Result<bool> read_string(const json& doc, const char* key, std::string* out) {
  if (!doc.contains(key) || doc[key].is_null()) return true;
  if (!doc[key].is_string()) return hf_error(std::string("'") + key + "' must be a string, got " + doc[key].dump());
  *out = doc[key].get<std::string>();
  return true;
}

// The first failure of reads made in order (each leaves its output alone when it fails).
Result<bool> first_failure(std::initializer_list<Result<bool>> reads) {
  for (const Result<bool>& read : reads) {
    if (!read) return read;
  }
  return true;
}

enum class Family { kLlama, kQwen2, kQwen3, kQwen3Moe, kGemma, kGemma2, kGemma3 };

// The decoders built like Llama: RMSNorm, RoPE, q/k/v/o projections of head_dim each, a gated
// 3-matrix MLP (SwiGLU; GeLU-tanh gated for Gemma), optional MoE.
//   llama/mistral/mixtral/qwen2: modeling_{llama,mistral,mixtral,qwen2}.py.
//   qwen3: modeling_qwen3.py Qwen3Attention adds q_norm/k_norm (RMSNorm of head_dim); q/k/v/o
//     biases only with attention_bias (default False, unlike Qwen2's fixed q/k/v biases);
//     head_dim defaults to 128 (Qwen3Config).
//   qwen3_moe: modeling_qwen3_moe.py Qwen3MoeSparseMoeBlock: router gate h x num_experts (no
//     bias), num_experts experts of 3 h x moe_intermediate_size; attention as qwen3.
//   gemma: modeling_gemma.py GemmaDecoderLayer: input/post_attention RMSNorm, GemmaMLP
//     gate/up/down (gated GeLU); head_dim 256, vocab 256000, tied (GemmaConfig defaults).
//   gemma2: modeling_gemma2.py Gemma2DecoderLayer adds pre_feedforward/post_feedforward
//     RMSNorm (4 per layer: sandwich_norm); Gemma2MLP gated, hidden_activation gelu_pytorch_tanh.
//   gemma3/gemma3_text: modeling_gemma3.py Gemma3Attention adds q_norm/k_norm (head_dim) to
//     Gemma 2's layer; Gemma3TextConfig defaults head_dim 256, vocab 262208, tied.
// Gemma's RMSNorm scales by (1 + w): the same one h-vector of weights per norm.
Result<Geometry> read_decoder(const json& doc, Family family) {
  Geometry g;
  const bool gemma = family == Family::kGemma || family == Family::kGemma2 || family == Family::kGemma3;
  if (gemma) g.vocab = family == Family::kGemma3 ? 262208 : 256000;
  int64_t head_dim = gemma ? 256 : family == Family::kQwen3 ? 128 : 0;
  int64_t kv_channels = 0;
  bool bias = false;
  std::string act = "silu";
  g.tied = gemma;
  if (Result<bool> read = first_failure({read_int(doc, "hidden_size", &g.hidden),
                      read_int(doc, "num_hidden_layers", &g.layers),
                      read_int(doc, "num_attention_heads", &g.heads),
                      read_int(doc, "num_key_value_heads", &g.kv_heads),
                      read_int(doc, "intermediate_size", &g.ffn),
                      read_int(doc, "vocab_size", &g.vocab),
                      read_int(doc, "kv_channels", &kv_channels),
                      read_int(doc, "head_dim", &head_dim),
                      read_bool(doc, "tie_word_embeddings", &g.tied),
                      read_bool(doc, "attention_bias", &bias),
                      read_string(doc, "hidden_act", &act)}); !read) {
    return read.error();
  }
  if (family == Family::kQwen3Moe) {
    int64_t sparse_step = 1;
    if (Result<bool> read = first_failure({read_int(doc, "num_experts", &g.experts),
                        read_int(doc, "num_experts_per_tok", &g.top_k),
                        read_int(doc, "moe_intermediate_size", &g.moe_ffn),
                        read_int(doc, "decoder_sparse_step", &sparse_step)}); !read) {
      return read.error();
    }
    if (g.experts == 0 || g.top_k == 0 || g.moe_ffn == 0) {
      return hf_error("qwen3_moe needs 'num_experts', 'num_experts_per_tok' and 'moe_intermediate_size'");
    }
    const bool dense_layers = doc.contains("mlp_only_layers") && doc["mlp_only_layers"].is_array() &&
                              !doc["mlp_only_layers"].empty();
    if (sparse_step != 1 || dense_layers) {
      return hf_error("qwen3_moe with dense layers between the MoE layers ('decoder_sparse_step' " +
                      std::to_string(sparse_step) + ", 'mlp_only_layers') is not supported");
    }
    if (g.ffn == 0) g.ffn = g.moe_ffn;  // intermediate_size sizes only the mlp_only_layers
  } else if (family == Family::kLlama) {
    if (Result<bool> read = first_failure({read_int(doc, "num_local_experts", &g.experts),
                        read_int(doc, "num_experts_per_tok", &g.top_k)}); !read) {
      return read.error();
    }
    if (g.experts > 0) {  // Mixtral: every expert is an intermediate_size SwiGLU MLP
      g.moe_ffn = g.ffn;
      if (g.top_k == 0) g.top_k = 2;
    }
  }
  if (g.heads == 0) return hf_error("missing 'num_attention_heads'");
  if (g.kv_heads == 0) g.kv_heads = g.heads;  // absent num_key_value_heads means MHA
  // head_dim (HF) or kv_channels (Megatron): kept only when it is not hidden/heads.
  if (!doc.contains("head_dim") || doc["head_dim"].is_null()) {
    if (kv_channels > 0) head_dim = kv_channels;
  }
  if (head_dim > 0 && (g.hidden % g.heads != 0 || head_dim != g.hidden / g.heads)) g.head_dim = head_dim;
  g.norm = Norm::kRmsNorm;
  // Gemma's MLP is gated whatever its activation; the others are SwiGLU when silu, else GeLU.
  g.mlp = (gemma || act == "silu" || act == "swish") ? Mlp::kSwiGlu : Mlp::kGelu;
  // Qwen2 always has q/k/v biases; the others have them when attention_bias is set (that also
  // gives o_proj a bias, h per layer, which Bias::kQkv leaves out; no released model sets it).
  g.bias = (family == Family::kQwen2 || bias) ? Bias::kQkv : Bias::kNone;
  g.qk_norm = family == Family::kQwen3 || family == Family::kQwen3Moe || family == Family::kGemma3;
  g.sandwich_norm = family == Family::kGemma2 || family == Family::kGemma3;
  return g;
}

Result<Geometry> read_gpt2(const json& doc) {
  // GPT2Config: n_embd, n_layer, n_head, n_inner (None -> 4*n_embd), tied, learned positions.
  Geometry g;
  int64_t inner = 0;
  g.tied = true;
  if (Result<bool> read = first_failure({read_int(doc, "n_embd", &g.hidden),
                      read_int(doc, "n_layer", &g.layers),
                      read_int(doc, "n_head", &g.heads),
                      read_int(doc, "n_inner", &inner),
                      read_int(doc, "vocab_size", &g.vocab),
                      read_int(doc, "n_positions", &g.learned_positions),
                      read_bool(doc, "tie_word_embeddings", &g.tied)}); !read) {
    return read.error();
  }
  g.kv_heads = g.heads;
  g.ffn = inner > 0 ? inner : 4 * g.hidden;
  g.mlp = Mlp::kGelu;
  g.norm = Norm::kLayerNorm;
  g.bias = Bias::kAll;
  g.dropout = doc.value("resid_pdrop", 0.1) > 0.0;
  if (g.learned_positions == 0) g.learned_positions = 1024;
  return g;
}

}  // namespace

Result<Geometry> geometry_from_hf_config(const std::string& text) {
  try {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::parse_error& e) {
      return hf_error("malformed JSON at byte " + std::to_string(e.byte) + ": " + parse_error_reason(e));
    }
    if (!doc.is_object()) return hf_error("top level must be a JSON object");
    std::string type;
    if (Result<bool> read = read_string(doc, "model_type", &type); !read) return read.error();
    // Gemma3ForConditionalGeneration (model_type "gemma3") nests its language model under
    // text_config (a Gemma3TextConfig); only that text model is read. Its SigLIP vision tower
    // (vision_config, ~417M parameters in the 4B/12B/27B releases) and the multimodal projector
    // are not counted.
    const json* body = &doc;
    if (type == "gemma3" && doc.contains("text_config") && !doc["text_config"].is_null()) {
      if (!doc["text_config"].is_object()) return hf_error("'text_config' must be a JSON object");
      body = &doc["text_config"];
    }
    Result<Geometry> read = [&]() -> Result<Geometry> {
      if (type == "gpt2") return read_gpt2(*body);
      if (type == "llama" || type == "mistral" || type == "mixtral" || type.empty()) {
        return read_decoder(*body, Family::kLlama);
      }
      if (type == "qwen2") return read_decoder(*body, Family::kQwen2);
      if (type == "qwen3") return read_decoder(*body, Family::kQwen3);
      if (type == "qwen3_moe") return read_decoder(*body, Family::kQwen3Moe);
      if (type == "gemma") return read_decoder(*body, Family::kGemma);
      if (type == "gemma2") return read_decoder(*body, Family::kGemma2);
      if (type == "gemma3" || type == "gemma3_text") return read_decoder(*body, Family::kGemma3);
      return hf_error("model_type '" + type +
                      "' is not supported; accepted: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma, "
                      "gemma2, gemma3, gemma3_text, gpt2");
    }();
    if (!read) return read;
    const Geometry& g = read.value();
    if (g.hidden == 0 || g.layers == 0 || g.heads == 0 || g.vocab == 0 || g.ffn == 0) {
      return hf_error("missing one of the hidden size, layer count, head count, vocab size or MLP size");
    }
    return read;
  } catch (const std::exception& e) {
    return hf_error(std::string("unexpected value type: ") + e.what());
  }
}

}  // namespace trainfit
