// HF config.json families beyond Llama/GPT-2: head_dim (Mistral-NeMo), Qwen3 (dense and MoE),
// Gemma 1/2/3. Each count is checked against a published figure; the source is beside it.
// "safetensors total" = the Hub's safetensors metadata parameter count for the model repository
// (https://huggingface.co/api/models/<repo>?expand[]=safetensors), i.e. the exact number of
// stored weights; for bf16 checkpoints it is model.safetensors.index.json total_size / 2.
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(TRAINFIT_FIXTURES) + "/hf/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "missing fixture " << name;
  return text.str();
}

Geometry geometry_of(const std::string& file) {
  Result<Geometry> g = geometry_from_hf_config(fixture(file));
  EXPECT_TRUE(g.ok()) << file << ": " << (g.ok() ? "" : g.error().message);
  return g.ok() ? g.value() : Geometry{};
}

struct Published {
  const char* file;
  const char* catalog;  // the catalog entry built from the same config.json ("" = none)
  double params;        // published exact count (the language model for Gemma 3 12B/27B)
};

// Published counts (exact):
//   Mistral-Nemo: mistralai/Mistral-Nemo-Instruct-2407 safetensors total 12,247,782,400 (12.25 B).
//   Qwen3: Qwen/Qwen3-0.6B 596,049,920; Qwen/Qwen3-8B 8,190,735,360 (index total_size
//     16,381,470,720 B bf16; card 8.2 B); Qwen/Qwen3-32B 32,762,123,264 (card 32.8 B);
//     Qwen/Qwen3-30B-A3B 30,532,122,624 (card 30.5 B) — safetensors totals.
//   Gemma 1: google/gemma-7b 8,537,680,896 (safetensors total; KerasHub gemma_7b_en "params").
//   Gemma 2: google/gemma-2-9b 9,241,705,984 (index total_size 18,483,411,968 B bf16);
//     google/gemma-2-27b-it 27,227,128,320 — safetensors totals.
//   Phi-3: microsoft/Phi-3-mini-4k-instruct 3,821,079,552 (safetensors total; KerasHub preset
//     phi3_mini_4k_instruct_en "params": 3821079552).
//   Granite: ibm-granite/granite-3.1-2b-base 2,533,531,648 (safetensors total of the 3.1 2B
//     releases, e.g. listed for ibm-granite/granite-3.1-2b-instruct and granite-guardian-3.1-2b).
//   OLMo 2: allenai/OLMo-2-1124-7B 7,298,617,344 (safetensors {"F32": 7298617344}).
//   Qwen2-MoE: Qwen/Qwen1.5-MoE-A2.7B 14,315,784,192 (safetensors total; KerasHub preset
//     qwen1.5_moe_2.7b_en "params": 14315784192).
//   DeepSeek-V2: deepseek-ai/DeepSeek-V2-Lite 15,706,484,224 (safetensors total, "15.7B").
//   Gemma 3: google/gemma-3-1b-it 999,885,952 (safetensors total, text only). The 12B and 27B
//     releases are Gemma3ForConditionalGeneration; trainfit counts their language model, the
//     safetensors total less the vision tower and projector (checked exactly below).
const Published kPublished[] = {
    {"mistral-nemo-12b.config.json", "mistral-nemo-12b", 12247782400.0},
    {"qwen3-0.6b.config.json", "qwen3-0.6b", 596049920.0},
    {"qwen3-8b.config.json", "qwen3-8b", 8190735360.0},
    {"qwen3-32b.config.json", "qwen3-32b", 32762123264.0},
    {"qwen3-30b-a3b.config.json", "qwen3-30b-a3b", 30532122624.0},
    {"gemma-7b.config.json", "gemma-7b", 8537680896.0},
    {"gemma-2-9b.config.json", "gemma2-9b", 9241705984.0},
    {"gemma-2-27b.config.json", "gemma2-27b", 27227128320.0},
    {"gemma-3-1b.config.json", "gemma3-1b", 999885952.0},
    {"gemma-3-12b.config.json", "gemma3-12b", 12187325040.0 - 416866032.0 - 4424832.0},
    {"gemma-3-27b.config.json", "gemma3-27b", 27432406640.0 - 416866032.0 - 6194304.0},
    {"phi-3-mini-4k-instruct.config.json", "phi3-mini", 3821079552.0},
    {"granite-3.1-2b-base.config.json", "granite3.1-2b", 2533531648.0},
    {"olmo-2-1124-7b.config.json", "", 7298617344.0},
    {"qwen1.5-moe-a2.7b.config.json", "", 14315784192.0},
    {"deepseek-v2-lite.config.json", "", 15706484224.0},
};

class HfFamily : public ::testing::TestWithParam<Published> {};

TEST_P(HfFamily, CountIsThePublishedNumber) {
  const Geometry g = geometry_of(GetParam().file);
  EXPECT_EQ(count_parameters(g).total, GetParam().params) << GetParam().file;
}

// A catalog entry holds the geometry of its config.json, so its count is the same.
TEST_P(HfFamily, CatalogEntryEqualsItsConfig) {
  if (std::string(GetParam().catalog).empty()) GTEST_SKIP() << "no catalog entry";
  Result<const ModelPreset*> preset = find_model(GetParam().catalog);
  ASSERT_TRUE(preset.ok()) << preset.error().message;
  const Geometry& c = (*preset)->geometry;
  const Geometry h = geometry_of(GetParam().file);
  EXPECT_EQ(c.layers, h.layers);
  EXPECT_EQ(c.hidden, h.hidden);
  EXPECT_EQ(c.heads, h.heads);
  EXPECT_EQ(c.kv_heads, h.kv_heads);
  EXPECT_EQ(c.head_size(), h.head_size());
  EXPECT_EQ(c.ffn, h.ffn);
  EXPECT_EQ(c.vocab, h.vocab);
  EXPECT_EQ(c.tied, h.tied);
  EXPECT_EQ(c.mlp, h.mlp);
  EXPECT_EQ(c.norm, h.norm);
  EXPECT_EQ(c.bias, h.bias);
  EXPECT_EQ(c.experts, h.experts);
  EXPECT_EQ(c.top_k, h.top_k);
  EXPECT_EQ(c.moe_ffn, h.moe_ffn);
  EXPECT_EQ(c.qk_norm, h.qk_norm);
  EXPECT_EQ(c.sandwich_norm, h.sandwich_norm);
  EXPECT_EQ(count_parameters(c).total, count_parameters(h).total);
  EXPECT_EQ((*preset)->expected_params, GetParam().params);
}

// The geometry survives the request path the CLI and the plugin take (--hf-config).
TEST_P(HfFamily, ResolvesThroughARequest) {
  const Geometry g = geometry_of(GetParam().file);
  Request request;
  set_geometry(request, g);
  request.num_gpus = 8;
  Result<Resolved> resolved = resolve(request);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_EQ(count_parameters(resolved->config.geo).total, GetParam().params);
  const Breakdown b = estimate(resolved->config);
  EXPECT_EQ(b.params.total, GetParam().params);
  EXPECT_GT(b.per_gpu_total, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Published, HfFamily, ::testing::ValuesIn(kPublished),
                         [](const ::testing::TestParamInfo<Published>& param_info) {
                           return testing::fixture_test_name(param_info.param.file);
                         });

TEST(HfFamilies, HeadDimChangesTheMistralNemoCount) {
  // hidden 5120 / 32 heads = 160, but Mistral-NeMo's heads are 128 wide.
  const Geometry with = geometry_of("mistral-nemo-12b.config.json");
  EXPECT_EQ(with.head_dim, 128);
  EXPECT_EQ(count_parameters(with).total, 12247782400.0);  // 12.25 B, the published count
  nlohmann::json doc = nlohmann::json::parse(fixture("mistral-nemo-12b.config.json"));
  doc.erase("head_dim");
  Result<Geometry> without = geometry_from_hf_config(doc.dump());
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->head_dim, 0);
  EXPECT_EQ(count_parameters(without.value()).total, 12772070400.0);  // 12.77 B: wrong by 524 M
  // Megatron's name for it.
  doc["kv_channels"] = 128;
  EXPECT_EQ(count_parameters(geometry_from_hf_config(doc.dump()).value()).total, 12247782400.0);
}

TEST(HfFamilies, HeadDimEqualToHiddenOverHeadsIsLeftImplicit) {
  // Qwen3-8B: head_dim 128 = 4096 / 32, so the geometry matches a plain one.
  EXPECT_EQ(geometry_of("qwen3-8b.config.json").head_dim, 0);
  EXPECT_EQ(geometry_of("gemma-2-27b.config.json").head_dim, 128);  // 4608 / 32 = 144
  EXPECT_EQ(geometry_of("gemma-3-27b.config.json").head_dim, 128);  // 5376 / 32 = 168
}

TEST(HfFamilies, FamilyFeatures) {
  const Geometry qwen3 = geometry_of("qwen3-8b.config.json");
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_FALSE(qwen3.sandwich_norm);
  EXPECT_EQ(qwen3.bias, Bias::kNone);  // unlike Qwen2, no q/k/v biases
  EXPECT_FALSE(qwen3.tied);
  EXPECT_TRUE(geometry_of("qwen3-0.6b.config.json").tied);
  const Geometry moe = geometry_of("qwen3-30b-a3b.config.json");
  EXPECT_EQ(moe.experts, 128);
  EXPECT_EQ(moe.top_k, 8);
  EXPECT_EQ(moe.moe_ffn, 768);
  EXPECT_TRUE(moe.qk_norm);
  const Geometry gemma = geometry_of("gemma-7b.config.json");
  EXPECT_FALSE(gemma.sandwich_norm);
  EXPECT_FALSE(gemma.qk_norm);
  EXPECT_EQ(gemma.mlp, Mlp::kSwiGlu);  // gated GeLU: three matrices although hidden_act is gelu
  EXPECT_EQ(gemma.head_dim, 256);
  EXPECT_TRUE(gemma.tied);             // GemmaConfig default
  const Geometry gemma2 = geometry_of("gemma-2-9b.config.json");
  EXPECT_TRUE(gemma2.sandwich_norm);
  EXPECT_FALSE(gemma2.qk_norm);
  EXPECT_EQ(gemma2.mlp, Mlp::kSwiGlu);
  const Geometry gemma3 = geometry_of("gemma-3-12b.config.json");
  EXPECT_TRUE(gemma3.sandwich_norm);
  EXPECT_TRUE(gemma3.qk_norm);
  EXPECT_EQ(gemma3.vocab, 262208);  // Gemma3TextConfig default: text_config omits it
  EXPECT_EQ(gemma3.head_dim, 256);  // likewise
  EXPECT_EQ(geometry_of("gemma-3-1b.config.json").vocab, 262144);
}

TEST(HfFamilies, PaperNonEmbeddingCounts) {
  // Gemma 2 report (arXiv 2408.00118) Table 2, non-embedding parameters (the paper's embedding
  // column uses a 256,128-row table; the released checkpoints have 256,000 rows).
  EXPECT_EQ(count_parameters(geometry_of("gemma-2-9b.config.json")).total - 256000.0 * 3584, 8324201984.0);
  EXPECT_EQ(count_parameters(geometry_of("gemma-2-27b.config.json")).total - 256000.0 * 4608, 26047480320.0);
  // Gemma report (arXiv 2403.08295) Table 2: 7B non-embedding 7,751,248,896.
  EXPECT_EQ(count_parameters(geometry_of("gemma-7b.config.json")).total - 256000.0 * 3072, 7751248896.0);
  // Gemma 3 report Table 1, non-embedding parameters in millions: 12B 10,759; 27B 25,600.
  const ParamCounts g12 = count_parameters(geometry_of("gemma-3-12b.config.json"));
  const ParamCounts g27 = count_parameters(geometry_of("gemma-3-27b.config.json"));
  EXPECT_NEAR((g12.total - g12.embedding) / 1e6, 10759.0, 0.5);
  EXPECT_NEAR((g27.total - g27.embedding) / 1e6, 25600.0, 0.5);
  // Qwen3 model cards, "Number of Parameters (Non-Embedding)": 8B 6.95B, 32B 31.2B, 0.6B 0.44B.
  const ParamCounts q8 = count_parameters(geometry_of("qwen3-8b.config.json"));
  const ParamCounts q32 = count_parameters(geometry_of("qwen3-32b.config.json"));
  const ParamCounts q06 = count_parameters(geometry_of("qwen3-0.6b.config.json"));
  EXPECT_NEAR((q8.total - q8.embedding - q8.lm_head) / 1e9, 6.95, 0.005);
  EXPECT_NEAR((q32.total - q32.embedding - q32.lm_head) / 1e9, 31.2, 0.05);
  EXPECT_NEAR((q06.total - q06.embedding - q06.lm_head) / 1e9, 0.44, 0.005);
}

// SigLIP vision tower (HF modeling_siglip.py, vision_use_head false): patch conv 3*p*p*w + w,
// position table (image/p)^2 * w, per layer q/k/v/o w*w + w each, fc1/fc2 w*f + f / f*w + w, two
// LayerNorms 2w each, post LayerNorm 2w; Gemma3MultiModalProjector: w x h projection + RMSNorm w
// (modeling_gemma3.py). Text + vision + projector must be the published safetensors total.
double siglip_and_projector(const nlohmann::json& config) {
  const nlohmann::json& v = config.at("vision_config");
  const double w = v.at("hidden_size").get<double>();
  const double f = v.at("intermediate_size").get<double>();
  const double layers = v.at("num_hidden_layers").get<double>();
  const double p = v.at("patch_size").get<double>();
  const double image = v.at("image_size").get<double>();
  const double h = config.at("text_config").at("hidden_size").get<double>();
  const double layer = 4 * (w * w + w) + (w * f + f) + (f * w + w) + 2 * 2 * w;
  const double tower = 3 * p * p * w + w + (image / p) * (image / p) * w + layers * layer + 2 * w;
  return tower + w * h + w;
}

TEST(HfFamilies, Gemma3TextPlusVisionTowerIsTheSafetensorsTotal) {
  // google/gemma-3-12b-it and google/gemma-3-27b-it safetensors totals.
  for (const auto& [file, total] : {std::pair<const char*, double>{"gemma-3-12b.config.json", 12187325040.0},
                                    std::pair<const char*, double>{"gemma-3-27b.config.json", 27432406640.0}}) {
    const nlohmann::json doc = nlohmann::json::parse(fixture(file));
    EXPECT_EQ(count_parameters(geometry_of(file)).total + siglip_and_projector(doc), total) << file;
  }
}

TEST(HfFamilies, BadValuesNameTheKey) {
  // Every hf config error is the field hf_config's (kInvalidValue): the config.json key at
  // fault is named by the message only, so the message is checked for it.
  const auto message = [](const std::string& text) {
    Result<Geometry> g = geometry_from_hf_config(text);
    EXPECT_FALSE(g.ok()) << text;
    if (g.ok()) return std::string();
    EXPECT_EQ(g.error().code, ErrorCode::kInvalidValue) << g.error().message;
    EXPECT_EQ(g.error().field, "hf_config") << g.error().message;
    return g.error().message;
  };
  const std::string qwen3 = R"("model_type":"qwen3","hidden_size":1024,"num_hidden_layers":2,)"
                            R"("num_attention_heads":16,"intermediate_size":3072,"vocab_size":1000)";
  EXPECT_NE(message("{" + qwen3 + R"(,"head_dim":-128})").find("'head_dim'"), std::string::npos);
  EXPECT_NE(message("{" + qwen3 + R"(,"head_dim":"128"})").find("'head_dim'"), std::string::npos);
  EXPECT_NE(message("{" + qwen3 + R"(,"kv_channels":0})").find("'kv_channels'"), std::string::npos);
  EXPECT_NE(message("{" + qwen3 + R"(,"tie_word_embeddings":"yes"})").find("'tie_word_embeddings'"),
            std::string::npos);
  EXPECT_NE(message("{" + qwen3 + R"(,"attention_bias":1})").find("'attention_bias'"), std::string::npos);
  EXPECT_NE(message(R"({"model_type":7})").find("'model_type'"), std::string::npos);
  EXPECT_NE(message(R"({"model_type":"gemma3","text_config":[1]})").find("'text_config'"), std::string::npos);
  EXPECT_NE(message(R"({"model_type":"gemma3","text_config":{"hidden_size":0}})").find("'hidden_size'"),
            std::string::npos);
  // Qwen3-MoE with dense layers in between is not read rather than miscounted.
  nlohmann::json moe = nlohmann::json::parse(fixture("qwen3-30b-a3b.config.json"));
  moe["mlp_only_layers"] = {0, 1};
  EXPECT_NE(message(moe.dump()).find("mlp_only_layers"), std::string::npos);
  moe["mlp_only_layers"] = nlohmann::json::array();
  moe["decoder_sparse_step"] = 2;
  EXPECT_NE(message(moe.dump()).find("decoder_sparse_step"), std::string::npos);
  moe.erase("decoder_sparse_step");
  moe.erase("num_experts");
  EXPECT_NE(message(moe.dump()).find("num_experts"), std::string::npos);
  // Unknown keys stay ignored; so do the siblings of text_config.
  EXPECT_TRUE(geometry_from_hf_config("{" + qwen3 + R"(,"some_future_key":{"x":[1,2]}})").ok());
}

// DeepSeek-V3: the published 671B is the main model (DeepSeek-V3 README_WEIGHTS.md: "685B,
// which includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP)
// Module weights"; the Hub's safetensors total counts the FP8 scale tensors too). trainfit
// counts the main model, what transformers' DeepseekV3ForCausalLM builds and trains; the
// figure is rounded to 1B, so the check is to half of that.
TEST(HfFamilies, DeepSeekV3IsThePublishedMainModel) {
  const Geometry g = geometry_of("deepseek-v3.config.json");
  EXPECT_NEAR(count_parameters(g).total, 671e9, 0.5e9);
  // The families' features as their config.json states them.
  EXPECT_EQ(g.kv_lora_rank, 512);
  EXPECT_EQ(g.q_lora_rank, 1536);
  EXPECT_EQ(g.head_size(), 128 + 64);  // qk_nope_head_dim + qk_rope_head_dim
  EXPECT_EQ(g.value_head_size(), 128);
  EXPECT_EQ(g.dense_layers, 3);        // first_k_dense_replace
  EXPECT_EQ(g.moe_layers(), 58);
  EXPECT_EQ(g.shared_ffn, 2048);       // n_shared_experts 1 x moe_intermediate_size
  Request request;
  set_geometry(request, g);
  request.num_gpus = 256;
  request.zero_stage = 3;
  Result<Resolved> resolved = resolve(request);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_NEAR(estimate(resolved->config).params.total, 671e9, 0.5e9);
  bool noted = false;
  for (const std::string& note : resolved->assumptions) noted = noted || note.find("multi-head latent attention") == 0;
  EXPECT_TRUE(noted);
}

// DeepSeek-V2-Lite has no query bottleneck (q_lora_rank null: a direct q_proj); with the V2
// default of 1536 the count would be 26 x (2048x1536 + 1536 + 1536x3072 - 2048x3072) larger.
TEST(HfFamilies, NullQLoraRankMeansADirectQueryProjection) {
  const Geometry g = geometry_of("deepseek-v2-lite.config.json");
  EXPECT_EQ(g.q_lora_rank, 0);
  EXPECT_EQ(g.kv_heads, g.heads);
  nlohmann::json doc = nlohmann::json::parse(fixture("deepseek-v2-lite.config.json"));
  doc.erase("q_lora_rank");
  Result<Geometry> with_default = geometry_from_hf_config(doc.dump());
  ASSERT_TRUE(with_default.ok()) << with_default.error().message;
  EXPECT_EQ(with_default->q_lora_rank, 1536);
}

// OLMo 2's q/k norms span every head (4096 + 4096 per layer), Qwen3's one head (128 + 128).
TEST(HfFamilies, Olmo2QkNormsSpanTheProjections) {
  const Geometry g = geometry_of("olmo-2-1124-7b.config.json");
  EXPECT_TRUE(g.qk_norm);
  EXPECT_TRUE(g.qk_norm_full);
  Geometry per_head = g;
  per_head.qk_norm_full = false;
  EXPECT_EQ(count_parameters(g).total - count_parameters(per_head).total, 32.0 * (8192 - 2 * 128));
}

// Qwen2-MoE: q/k/v biases, a shared expert of shared_expert_intermediate_size and its gate.
TEST(HfFamilies, Qwen2MoeSharedExpertAndGate) {
  const Geometry g = geometry_of("qwen1.5-moe-a2.7b.config.json");
  EXPECT_EQ(g.bias, Bias::kQkv);
  EXPECT_EQ(g.experts, 60);
  EXPECT_EQ(g.top_k, 4);
  EXPECT_EQ(g.shared_ffn, 5632);
  EXPECT_TRUE(g.shared_expert_gate);
}

TEST(HfFamilies, BadDeepSeekFieldsAreOneLine) {
  nlohmann::json doc = nlohmann::json::parse(fixture("deepseek-v3.config.json"));
  doc["moe_layer_freq"] = 2;
  Result<Geometry> g = geometry_from_hf_config(doc.dump());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().field, "hf_config");
  EXPECT_NE(g.error().message.find("'moe_layer_freq' 2 is not supported; accepted: 1"), std::string::npos) << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
}

// The name an HF config is shown by: what the user gave, else the config's own.
TEST(HfConfigLabel, FileDirectoryNameOrPathModelType) {
  const std::string phi = fixture("phi-3-mini-4k-instruct.config.json");
  EXPECT_EQ(hf_config_label(phi, "tests/fixtures/hf/phi-3-mini-4k-instruct.config.json"), "phi-3-mini-4k-instruct");
  EXPECT_EQ(hf_config_label(phi, "/models/Meta-Llama-3-8B/config.json"), "Meta-Llama-3-8B");
  EXPECT_EQ(hf_config_label(phi, "my-model.json"), "my-model");
  // config.json in the working folder, or standard input: the config's _name_or_path.
  EXPECT_EQ(hf_config_label(phi, "config.json"), "Phi-3-mini-4k-instruct");
  EXPECT_EQ(hf_config_label(phi, "-"), "Phi-3-mini-4k-instruct");
  EXPECT_EQ(hf_config_label(R"({"_name_or_path": "meta-llama/Meta-Llama-3-8B", "model_type": "llama"})", "-"),
            "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(hf_config_label(R"({"_name_or_path": "/raid/ckpt/run7", "model_type": "llama"})", "-"), "run7");
  EXPECT_EQ(hf_config_label(fixture("olmo-2-1124-7b.config.json"), "-"), "olmo2 (hf config)");
}

}  // namespace
}  // namespace trainfit
