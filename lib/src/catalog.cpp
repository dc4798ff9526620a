// Model and GPU catalogs, parsed once from the JSON compiled in from conf/.
#include "trainfit/catalog.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "catalog_data.h"
#include "text.h"

namespace trainfit {
namespace {

using nlohmann::json;

Mlp mlp_from(const std::string& s) { return s == "gelu" ? Mlp::kGelu : Mlp::kSwiGlu; }
Norm norm_from(const std::string& s) { return s == "layernorm" ? Norm::kLayerNorm : Norm::kRmsNorm; }
Bias bias_from(const std::string& s) {
  return s == "all" ? Bias::kAll : s == "qkv" ? Bias::kQkv : Bias::kNone;
}

std::vector<std::string> strings_of(const json& entry, const char* key) {
  std::vector<std::string> out;
  if (entry.contains(key)) {
    for (const auto& item : entry[key]) out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::string> aliases_of(const json& entry) { return strings_of(entry, "aliases"); }

std::vector<ModelPreset> load_models() {
  std::vector<ModelPreset> out;
  try {
    const json doc = json::parse(catalog_data::kModelsJson);
    for (const json& m : doc.at("models")) {
      ModelPreset p;
      p.name = m.at("name").get<std::string>();
      p.aliases = aliases_of(m);
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
      g.mlp = mlp_from(m.value("mlp", "swiglu"));
      g.norm = norm_from(m.value("norm", "rmsnorm"));
      g.bias = bias_from(m.value("bias", "none"));
      g.learned_positions = m.value("learned_positions", int64_t{0});
      g.dropout = m.value("dropout", false);
      g.experts = m.value("experts", int64_t{0});
      g.top_k = m.value("top_k", int64_t{0});
      g.moe_ffn = m.value("moe_ffn", int64_t{0});
      g.head_dim = m.value("head_dim", int64_t{0});  // 0 = hidden / heads
      g.qk_norm = m.value("qk_norm", false);
      g.sandwich_norm = m.value("sandwich_norm", false);
      p.expected_params = m.value("expected_params", 0.0);
      out.push_back(std::move(p));
    }
  } catch (...) {
    out.clear();  // a broken catalog is caught by the catalog tests, never thrown
  }
  return out;
}

std::vector<GpuSpec> load_gpus() {
  std::vector<GpuSpec> out;
  try {
    const json doc = json::parse(catalog_data::kGpusJson);
    for (const json& g : doc.at("gpus")) {
      GpuSpec spec;
      spec.name = g.at("name").get<std::string>();
      spec.aliases = aliases_of(g);
      spec.description = g.value("description", "");
      spec.capacity_bytes = g.at("capacity_bytes").get<double>();
      spec.source = g.value("source", "");
      spec.device_names = strings_of(g, "device_names");
      spec.device_names_source = g.value("device_names_source", "");
      out.push_back(std::move(spec));
    }
  } catch (...) {
    out.clear();
  }
  return out;
}

template <typename Entry>
Result<const Entry*> find_in(const std::vector<Entry>& catalog, const std::string& name,
                             const char* field, const char* listing_command) {
  const std::string wanted = lower(trim(name));
  std::vector<std::string> candidates;
  for (const Entry& entry : catalog) {
    if (lower(entry.name) == wanted) return &entry;
    for (const std::string& alias : entry.aliases) {
      if (lower(alias) == wanted) return &entry;
    }
    candidates.push_back(entry.name);
  }
  const std::string hint = did_you_mean(wanted, candidates);
  return make_error(ErrorCode::kUnknownName, field,
                    std::string(field) + "='" + name + "' is not in the catalog" +
                        (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; see '" +
                        listing_command + "'");
}

// The form GPU lookups compare: trimmed, ASCII lower case, '-' read as '_'.
std::string gpu_key(const std::string& text) {
  std::string key = lower(trim(text));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// Every accepted spelling's key -> its catalog entry (the first entry wins a clash;
// the catalog tests keep them apart).
const std::unordered_map<std::string, const GpuSpec*>& gpu_index() {
  static const std::unordered_map<std::string, const GpuSpec*> index = [] {
    std::unordered_map<std::string, const GpuSpec*> out;
    for (const GpuSpec& gpu : gpu_catalog()) {
      for (const std::string& spelling : gpu_spellings(gpu)) out.emplace(gpu_key(spelling), &gpu);
    }
    return out;
  }();
  return index;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<ModelPreset>& model_catalog() {
  static const std::vector<ModelPreset> models = load_models();
  return models;
}

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> gpus = load_gpus();
  return gpus;
}

Result<const ModelPreset*> find_model(const std::string& name) {
  return find_in(model_catalog(), name, "model", "trainfit models");
}

const GpuSpec* gpu_in_catalog(const std::string& name) {
  const auto& index = gpu_index();
  const auto found = index.find(gpu_key(name));
  return found == index.end() ? nullptr : found->second;
}

Result<const GpuSpec*> find_gpu(const std::string& name) {
  if (const GpuSpec* gpu = gpu_in_catalog(name)) return gpu;
  return find_in(gpu_catalog(), name, "gpu", "trainfit gpus");  // the "did you mean" error
}

std::string slurm_gres_type_name(const std::string& device_name) {
  std::string out = device_name;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == ' ') c = '_';
  }
  return out;
}

std::vector<std::string> gpu_spellings(const GpuSpec& gpu) {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& spelling) {
    if (!spelling.empty() && std::find(out.begin(), out.end(), spelling) == out.end()) {
      out.push_back(spelling);
    }
  };
  add(gpu.name);
  for (const std::string& alias : gpu.aliases) add(alias);
  for (const std::string& device : gpu.device_names) add(device);
  for (const std::string& device : gpu.device_names) add(slurm_gres_type_name(device));
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > 64) return "";  // no name is that long; edit distances would cost O(size)
  const std::string w = lower(word);
  std::string best;
  size_t best_distance = std::max<size_t>(2, w.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const std::string c = lower(candidate);
    size_t d = edit_distance(w, c);
    // A prefix ("llama3" for "llama3-8b") is a strong hint too.
    if (c.rfind(w, 0) == 0 && w.size() >= 3) d = std::min(d, size_t{1});
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace trainfit
