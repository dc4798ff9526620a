// Hugging Face config.json -> Geometry. Per-family key names and defaults follow transformers'
// configuration_{llama,mistral,mixtral,qwen2,qwen3,qwen3_moe,gemma,gemma2,gemma3,gpt2}.py and
// configuration_{phi3,granite,olmo2,qwen2_moe,deepseek_v2,deepseek_v3}.py (deepseek_v2's read on
// main at 008e574391258935f3ecc3035c882e73bbcac419); the parameters each family's modules hold
// follow the matching modeling_*.py (cited per family).
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

enum class Family { kLlama, kQwen2, kQwen3, kQwen3Moe, kGemma, kGemma2, kGemma3, kPhi3, kGranite, kOlmo2, kQwen2Moe,
                    kDeepseekV2, kDeepseekV3 };

// Reads an integer field that may be null on purpose: null (or absent when null_is_zero) -> 0.
Result<bool> read_int_or_null(const json& doc, const char* key, int64_t* out) {
  if (doc.contains(key) && doc[key].is_null()) {
    *out = 0;
    return true;
  }
  return read_int(doc, key, out);
}

// DeepSeek-V2/V3 (configuration_deepseek_v3.py defaults for V3; V2's from
// configuration_deepseek_v2.py): multi-head latent attention and DeepSeekMoE. Attention per
// modeling_deepseek_v3.py DeepseekV3Attention (q_lora_rank null: a direct q_proj, as in
// DeepSeek-V2-Lite); DeepseekV3MoE: n_routed_experts experts and n_shared_experts shared ones of
// moe_intermediate_size (one MLP of n_shared x moe_intermediate_size), a router h x E; layers
// before first_k_dense_replace keep a dense MLP of intermediate_size. Not counted: V3's router
// e_score_correction_bias (E per MoE layer, 14,848 in V3: 0.000002%) and the multi-token
// prediction module (num_nextn_predict_layers), which transformers' DeepseekV3ForCausalLM does
// not build (its weights, model.layers.61, are skipped at load), nor does training through it.
Result<bool> read_deepseek(const json& doc, Family family, Geometry* g) {
  const bool v3 = family == Family::kDeepseekV3;
  int64_t nope = 128, rope = 64, v = 128, q_rank = 1536, kv_rank = 512;
  int64_t routed = v3 ? 256 : 64, shared = v3 ? 1 : 2, moe_ffn = v3 ? 2048 : 1407, dense = v3 ? 3 : 0;
  int64_t top_k = v3 ? 8 : 0, layer_freq = 1;
  if (Result<bool> read = first_failure({read_int(doc, "qk_nope_head_dim", &nope), read_int(doc, "qk_rope_head_dim", &rope),
                                         read_int(doc, "v_head_dim", &v), read_int_or_null(doc, "q_lora_rank", &q_rank),
                                         read_int(doc, "kv_lora_rank", &kv_rank), read_int(doc, "n_routed_experts", &routed),
                                         read_int_or_null(doc, "n_shared_experts", &shared),
                                         read_int(doc, "moe_intermediate_size", &moe_ffn),
                                         read_int_or_null(doc, "first_k_dense_replace", &dense),
                                         read_int(doc, "num_experts_per_tok", &top_k),
                                         read_int(doc, "moe_layer_freq", &layer_freq)});
      !read) {
    return read;
  }
  if (top_k == 0) return hf_error("deepseek needs 'num_experts_per_tok'");
  if (layer_freq != 1) {
    return hf_error("'moe_layer_freq' " + std::to_string(layer_freq) + " is not supported; accepted: 1 (every layer after first_k_dense_replace is MoE)");
  }
  if (dense >= g->layers) {
    return hf_error("'first_k_dense_replace' " + std::to_string(dense) + " must be below num_hidden_layers " + std::to_string(g->layers));
  }
  g->kv_heads = g->heads;  // a key and a value per head, decompressed from the latent
  g->head_dim = nope + rope;
  g->rope_head_dim = rope;
  g->v_head_dim = v;
  g->q_lora_rank = q_rank;
  g->kv_lora_rank = kv_rank;
  g->experts = routed;
  g->top_k = top_k;
  g->moe_ffn = moe_ffn;
  g->shared_ffn = shared * moe_ffn;
  g->dense_layers = dense;
  return true;
}

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
  const bool deepseek = family == Family::kDeepseekV2 || family == Family::kDeepseekV3;
  if (gemma) g.vocab = family == Family::kGemma3 ? 262208 : 256000;
  if (family == Family::kPhi3) g.vocab = 32064;  // Phi3Config default
  if (family == Family::kQwen2Moe) g.vocab = 151936;  // Qwen2MoeConfig default
  if (family == Family::kDeepseekV3) g.vocab = 129280;  // DeepseekV3Config default
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
  if (family == Family::kQwen3Moe || family == Family::kQwen2Moe) {
    // qwen2_moe (modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock) as qwen3_moe, plus a shared
    // expert of shared_expert_intermediate_size and its sigmoid gate h x 1, both always built.
    const char* type = family == Family::kQwen2Moe ? "qwen2_moe" : "qwen3_moe";
    int64_t sparse_step = 1;
    if (Result<bool> read = first_failure({read_int(doc, "num_experts", &g.experts),
                        read_int(doc, "num_experts_per_tok", &g.top_k),
                        read_int(doc, "moe_intermediate_size", &g.moe_ffn),
                        read_int(doc, "decoder_sparse_step", &sparse_step)}); !read) {
      return read.error();
    }
    if (g.experts == 0 || g.top_k == 0 || g.moe_ffn == 0) {
      return hf_error(std::string(type) + " needs 'num_experts', 'num_experts_per_tok' and 'moe_intermediate_size'");
    }
    const bool dense_layers = doc.contains("mlp_only_layers") && doc["mlp_only_layers"].is_array() &&
                              !doc["mlp_only_layers"].empty();
    if (sparse_step != 1 || dense_layers) {
      return hf_error(std::string(type) + " with dense layers between the MoE layers ('decoder_sparse_step' " +
                      std::to_string(sparse_step) + ", 'mlp_only_layers') is not supported");
    }
    if (family == Family::kQwen2Moe) {
      if (Result<bool> read = read_int_or_null(doc, "shared_expert_intermediate_size", &g.shared_ffn); !read) return read.error();
      g.shared_expert_gate = true;
    }
    if (g.ffn == 0) g.ffn = g.moe_ffn;  // intermediate_size sizes only the mlp_only_layers
  } else if (deepseek) {
    if (g.heads == 0 || g.layers == 0) return hf_error("missing 'num_attention_heads' or 'num_hidden_layers'");
    if (Result<bool> read = read_deepseek(doc, family, &g); !read) return read.error();
    head_dim = g.head_dim;
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
  // Qwen2 (and Qwen2-MoE) always has q/k/v biases; the others have them when attention_bias is
  // set (that also gives o_proj a bias, h per layer, which Bias::kQkv leaves out; no released
  // model sets it).
  g.bias = (family == Family::kQwen2 || family == Family::kQwen2Moe || bias) ? Bias::kQkv : Bias::kNone;
  g.qk_norm = family == Family::kQwen3 || family == Family::kQwen3Moe || family == Family::kGemma3 || family == Family::kOlmo2;
  // OLMo 2 (modeling_olmo2.py Olmo2Attention): q_norm/k_norm over heads x head_dim, and the
  // layer's two norms after attention and after the MLP (post_attention_layernorm,
  // post_feedforward_layernorm) instead of before: the same two h-vectors.
  g.qk_norm_full = family == Family::kOlmo2;
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

namespace {

// The last component of a path ("" for none), trailing '/' ignored.
std::string last_component(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool usable_label(const std::string& text) {
  if (text.empty() || text.size() > 100 || text == "." || text == "..") return false;
  for (char ch : text) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return false;
  }
  return true;
}

std::string strip_suffix(std::string text, const std::string& suffix) {
  if (text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
    text.resize(text.size() - suffix.size());
  }
  return text;
}

}  // namespace

std::string hf_config_label(const std::string& text, const std::string& path) {
  if (!path.empty() && path != "-") {
    std::string file = last_component(path);
    std::string name;
    if (file == "config.json") {
      const size_t slash = path.rfind('/');
      name = slash == std::string::npos ? "" : last_component(path.substr(0, slash));
    } else {
      name = strip_suffix(strip_suffix(file, ".json"), ".config");
    }
    if (usable_label(name)) return name;
  }
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) return "hf config";
  if (doc.contains("_name_or_path") && doc["_name_or_path"].is_string()) {
    const std::string name = last_component(doc["_name_or_path"].get<std::string>());
    // A Hub id keeps its ORG/ ("meta-llama/Meta-Llama-3-8B"); a local path gives its last folder.
    const std::string given = doc["_name_or_path"].get<std::string>();
    const bool hub_id = given.find('/') != std::string::npos && given.find('/') == given.rfind('/') && given[0] != '/' &&
                        given[0] != '.';
    if (usable_label(hub_id ? given : name)) return hub_id ? given : name;
  }
  if (doc.contains("model_type") && doc["model_type"].is_string() && usable_label(doc["model_type"].get<std::string>())) {
    return doc["model_type"].get<std::string>() + " (hf config)";
  }
  return "hf config";
}

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
      // phi3: modeling_phi3.py fuses q/k/v into qkv_proj (h x (a + 2g) d) and gate/up into
      // gate_up_proj (h x 2F): the same parameters as Llama's separate projections, no biases.
      if (type == "phi3") return read_decoder(*body, Family::kPhi3);
      // granite: modeling_granite.py is Llama's layer; its embedding/attention/residual
      // multipliers and logits_scaling are scalars of the config, no parameters.
      if (type == "granite") return read_decoder(*body, Family::kGranite);
      if (type == "olmo2") return read_decoder(*body, Family::kOlmo2);
      if (type == "qwen2_moe") return read_decoder(*body, Family::kQwen2Moe);
      if (type == "deepseek_v2") return read_decoder(*body, Family::kDeepseekV2);
      if (type == "deepseek_v3") return read_decoder(*body, Family::kDeepseekV3);
      if (type == "qwen2") return read_decoder(*body, Family::kQwen2);
      if (type == "qwen3") return read_decoder(*body, Family::kQwen3);
      if (type == "qwen3_moe") return read_decoder(*body, Family::kQwen3Moe);
      if (type == "gemma") return read_decoder(*body, Family::kGemma);
      if (type == "gemma2") return read_decoder(*body, Family::kGemma2);
      if (type == "gemma3" || type == "gemma3_text") return read_decoder(*body, Family::kGemma3);
      return hf_error("model_type '" + type +
                      "' is not supported; accepted: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, "
                      "gemma, gemma2, gemma3, gemma3_text, phi3, granite, olmo2, deepseek_v2, deepseek_v3, gpt2");
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
