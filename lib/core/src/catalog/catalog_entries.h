// One catalog entry (conf/models.json, conf/gpus.json and the site files) as a ModelPreset
// or GpuSpec: shared by the built-in loader (catalog.cpp) and the site catalogs
// (catalog_site.cpp), which validates each entry before converting it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainfit/util/text.h"
#include "trainfit/catalog.h"

namespace trainfit::catalog_entries {

// One table per vocabulary: parse, print and "accepted" read it.
template <typename T>
struct Word {
  const char* name;
  T value;
};
constexpr Word<Mlp> kMlpWords[] = {{"swiglu", Mlp::kSwiGlu}, {"gelu", Mlp::kGelu}};
constexpr Word<Norm> kNormWords[] = {{"rmsnorm", Norm::kRmsNorm}, {"layernorm", Norm::kLayerNorm}};
constexpr Word<GpuArchitecture> kArchitectureWords[] = {
    {"volta", GpuArchitecture::kVolta},   {"turing", GpuArchitecture::kTuring},       {"ampere", GpuArchitecture::kAmpere},
    {"ada", GpuArchitecture::kAda},       {"hopper", GpuArchitecture::kHopper},       {"blackwell", GpuArchitecture::kBlackwell},
    {"cdna2", GpuArchitecture::kCdna2},   {"cdna3", GpuArchitecture::kCdna3},         {"other", GpuArchitecture::kOther}};
constexpr Word<Bias> kBiasWords[] = {{"none", Bias::kNone}, {"qkv", Bias::kQkv}, {"all", Bias::kAll}};

template <typename T, size_t N>
bool word_value(const Word<T> (&words)[N], const std::string& text, T* out) {
  for (const Word<T>& w : words) {
    if (text == w.name) {
      *out = w.value;
      return true;
    }
  }
  return false;
}

template <typename T, size_t N>
std::string accepted_words(const Word<T> (&words)[N]) {
  std::string out;
  for (const Word<T>& w : words) out += (out.empty() ? "" : "|") + std::string(w.name);
  return out;
}

inline std::vector<std::string> strings_of(const nlohmann::json& entry, const char* key) {
  std::vector<std::string> out;
  if (entry.contains(key)) {
    for (const auto& item : entry[key]) out.push_back(item.get<std::string>());
  }
  return out;
}

// A Hugging Face Hub repository id as the Hub accepts it: ORG/NAME, each part 1 to 96
// characters from A-Z a-z 0-9 . _ - (huggingface_hub utils/_validators.py validate_repo_id).
inline bool valid_hf_id(const std::string& id) {
  const size_t slash = id.find('/');
  if (slash == std::string::npos || id.find('/', slash + 1) != std::string::npos) return false;
  const auto part_ok = [](const std::string& part) {
    if (part.empty() || part.size() > 96 || part.front() == '.' || part.front() == '-' || part.find("..") != std::string::npos) return false;
    for (char c : part) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) return false;
    }
    return true;
  };
  return part_ok(id.substr(0, slash)) && part_ok(id.substr(slash + 1));
}

// Throws (nlohmann) on a missing required field or a wrong type: callers catch.
inline ModelPreset model_from(const nlohmann::json& m) {
  ModelPreset p;
  p.name = m.at("name").get<std::string>();
  p.aliases = strings_of(m, "aliases");
  p.hf_ids = strings_of(m, "hf_ids");
  p.description = m.value("description", "");
  p.source = m.value("source", "");
  Geometry& g = p.geometry;
  g.layers = m.at("layers").get<int64_t>();
  g.hidden = m.at("hidden").get<int64_t>();
  g.heads = m.at("heads").get<int64_t>();
  g.kv_heads = m.value("kv_heads", g.heads);
  g.ffn = m.at("ffn").get<int64_t>();
  g.vocab = m.at("vocab").get<int64_t>();
  g.tied = m.value("tied", false);
  g.mlp = Mlp::kSwiGlu;
  word_value(kMlpWords, m.value("mlp", "swiglu"), &g.mlp);
  g.norm = Norm::kRmsNorm;
  word_value(kNormWords, m.value("norm", "rmsnorm"), &g.norm);
  g.bias = Bias::kNone;
  word_value(kBiasWords, m.value("bias", "none"), &g.bias);
  g.learned_positions = m.value("learned_positions", int64_t{0});
  g.dropout = m.value("dropout", false);
  g.experts = m.value("experts", int64_t{0});
  g.top_k = m.value("top_k", int64_t{0});
  g.moe_ffn = m.value("moe_ffn", int64_t{0});
  g.head_dim = m.value("head_dim", int64_t{0});  // 0 = hidden / heads
  g.qk_norm = m.value("qk_norm", false);
  g.sandwich_norm = m.value("sandwich_norm", false);
  p.expected_params = m.value("expected_params", 0.0);
  return p;
}

inline GpuSpec gpu_from(const nlohmann::json& g) {
  GpuSpec spec;
  spec.name = g.at("name").get<std::string>();
  spec.aliases = strings_of(g, "aliases");
  spec.description = g.value("description", "");
  spec.capacity_bytes = g.at("capacity_bytes").get<double>();
  spec.source = g.value("source", "");
  spec.device_names = strings_of(g, "device_names");
  spec.device_names_source = g.value("device_names_source", "");
  word_value(kArchitectureWords, g.value("architecture", "other"), &spec.architecture);
  return spec;
}

// The form GPU lookups compare: trimmed, ASCII lower case, '-' read as '_'.
inline std::string gpu_key(const std::string& text) {
  std::string key = lower(trim(text));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

}  // namespace trainfit::catalog_entries

namespace trainfit::catalog_entries {
// The catalogs compiled in from conf/ (catalog.cpp): site files merge onto these.
const std::vector<ModelPreset>& builtin_models();
const std::vector<GpuSpec>& builtin_gpus();
}  // namespace trainfit::catalog_entries
