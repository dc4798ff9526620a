// Model and GPU catalogs, parsed once from the JSON compiled in from conf/; site catalogs
// (catalog_site.cpp) replace them whole through install_catalogs().
#include "trainfit/catalog.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "catalog_data.h"
#include "catalog_entries.h"
#include "trainfit/util/text.h"

namespace trainfit {
namespace {

using nlohmann::json;

std::vector<ModelPreset> load_models() {
  std::vector<ModelPreset> out;
  try {
    const json doc = json::parse(catalog_data::kModelsJson);
    for (const json& m : doc.at("models")) out.push_back(catalog_entries::model_from(m));
  } catch (...) {
    out.clear();  // a broken catalog is caught by the catalog tests, never thrown
  }
  return out;
}

std::vector<GpuSpec> load_gpus() {
  std::vector<GpuSpec> out;
  try {
    const json doc = json::parse(catalog_data::kGpusJson);
    for (const json& g : doc.at("gpus")) out.push_back(catalog_entries::gpu_from(g));
  } catch (...) {
    out.clear();
  }
  return out;
}

const std::vector<std::string>& hub_ids(const ModelPreset& model) { return model.hf_ids; }
const std::vector<std::string>& hub_ids(const GpuSpec&) {
  static const std::vector<std::string> none;
  return none;
}

// Names, aliases and Hub ids are matched case-insensitively (the Hub's own resolution ignores
// case too: huggingface.co/meta-llama/meta-llama-3-8b redirects); an unknown ORG/NAME gets its
// did-you-mean from the short names and the Hub ids alike.
// Whether `candidate` is `wanted` misspelled rather than another model or GPU: its beginning, the
// same digits with other letters (Instrukt), or the same letters with a digit repeated (H1000).
// A size or a version that differs (llama3-7b, a10g, Mistral-7B-v0.3) is another thing.
bool misspells(const std::string& wanted, const std::string& candidate) {
  const std::string w = lower(wanted), c = lower(candidate);
  if (w.size() >= 3 && c.rfind(w, 0) == 0) return true;
  auto digits = [](const std::string& t, bool squeeze) {
    std::string out;
    for (char ch : t) {
      if (ch >= '0' && ch <= '9' && !(squeeze && !out.empty() && out.back() == ch)) out += ch;
    }
    return out;
  };
  auto letters = [](const std::string& t) {
    std::string out;
    for (char ch : t) if (ch >= 'a' && ch <= 'z') out += ch;
    return out;
  };
  return digits(w, false) == digits(c, false) || (letters(w) == letters(c) && digits(w, true) == digits(c, true));
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
    for (const std::string& id : hub_ids(entry)) {
      if (lower(id) == wanted) return &entry;
      candidates.push_back(id);
    }
  }
  const std::string hint = did_you_mean(wanted, candidates);
  std::string suggestion;
  if (!hint.empty() && misspells(wanted, hint)) {
    suggestion = " (did you mean '" + hint + "'?)";
  } else if (!hint.empty()) {
    const bool gpu = std::string(field) == "gpu";
    suggestion = std::string(" (the nearest catalog entry, '") + hint + "', is a different " + (gpu ? "GPU" : "model") +
                 (gpu ? ": add yours to a site catalog, or give gpu_memory_gb)"
                      : ": add yours to a site catalog, or give its config.json or its geometry)");
  }
  return make_error(ErrorCode::kUnknownName, field,
                    std::string(field) + "='" + name + "' is not in the catalog" + suggestion + "; see '" +
                        listing_command + "'");
}

// The name of an instruct or chat model trained from a catalog entry, read as that entry: the same
// geometry under another name (Qwen/Qwen2.5-72B-Instruct, meta-llama/Llama-2-7b-chat-hf, google/
// gemma-2-9b-it). Returns "" when the name has no such word.
std::string base_model_name(const std::string& name) {
  const size_t slash = name.rfind('/');
  const std::string org = slash == std::string::npos ? "" : name.substr(0, slash + 1);
  const std::string model = name.substr(org.size());
  std::string out;
  bool dropped = false;
  size_t start = 0;
  while (start <= model.size()) {
    size_t dash = model.find('-', start);
    if (dash == std::string::npos) dash = model.size();
    const std::string word = lower(model.substr(start, dash - start));
    if (start > 0 && (word == "instruct" || word == "chat" || word == "it")) {
      dropped = true;
    } else {
      out += (out.empty() ? "" : "-") + model.substr(start, dash - start);
    }
    start = dash + 1;
  }
  return dropped ? org + out : "";
}

using catalog_entries::gpu_key;

// One catalog as lookups see it: immutable once built. Every accepted GPU spelling's key
// -> its entry (the first entry wins a clash; the catalog tests and the site-catalog
// validation keep them apart).
struct Installed {
  std::vector<ModelPreset> models;
  std::vector<GpuSpec> gpus;
  std::unordered_map<std::string, const GpuSpec*> gpu_index;
  // Every model spelling find_in accepts (name, alias, Hub id), lower-cased -> its entry; the
  // first entry wins a clash, as find_in's scan in catalog order does.
  std::unordered_map<std::string, const ModelPreset*> model_index;
};

std::unique_ptr<Installed> make_installed(std::vector<ModelPreset> models, std::vector<GpuSpec> gpus) {
  auto out = std::make_unique<Installed>();
  out->models = std::move(models);
  out->gpus = std::move(gpus);
  for (const GpuSpec& gpu : out->gpus) {
    for (const std::string& spelling : gpu_spellings(gpu)) out->gpu_index.emplace(gpu_key(spelling), &gpu);
  }
  for (const ModelPreset& model : out->models) {
    out->model_index.emplace(lower(model.name), &model);
    for (const std::string& alias : model.aliases) out->model_index.emplace(lower(alias), &model);
    for (const std::string& id : model.hf_ids) out->model_index.emplace(lower(id), &model);
  }
  return out;
}

const Installed& builtin() {
  static const std::unique_ptr<Installed> catalogs = make_installed(load_models(), load_gpus());
  return *catalogs;
}

// The site catalog in use (nullptr: the built-in one). Replaced catalogs are kept: a thread in
// the middle of a lookup or holding a GpuSpec* keeps a valid object. A process that reloads
// them often (the job_submit plugin) frees them with free_replaced_catalogs(), its readers
// holding a CatalogUse. Loads and stores are seq_cst: a reader that counted itself in
// g_readers sees the pointer a freer swapped before it saw no reader.
std::atomic<const Installed*> g_installed{nullptr};
std::atomic<int64_t> g_readers{0};
std::mutex g_installed_mutex;
std::vector<std::unique_ptr<Installed>>& kept() {
  static std::vector<std::unique_ptr<Installed>> all;
  return all;
}

const Installed& current() {
  const Installed* site = g_installed.load(std::memory_order_seq_cst);
  return site != nullptr ? *site : builtin();
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

const std::vector<ModelPreset>& catalog_entries::builtin_models() { return builtin().models; }
const std::vector<GpuSpec>& catalog_entries::builtin_gpus() { return builtin().gpus; }

const std::vector<ModelPreset>& model_catalog() { return current().models; }

const std::vector<GpuSpec>& gpu_catalog() { return current().gpus; }

bool install_catalogs(const CatalogSet& set) {
  if (!set.problems.empty() || set.models.empty() || set.gpus.empty()) return false;
  std::unique_ptr<Installed> next = make_installed(set.models, set.gpus);
  std::lock_guard<std::mutex> lock(g_installed_mutex);
  g_installed.store(next.get(), std::memory_order_seq_cst);
  kept().push_back(std::move(next));
  return true;
}

void install_builtin_catalogs() {
  std::lock_guard<std::mutex> lock(g_installed_mutex);
  g_installed.store(nullptr, std::memory_order_seq_cst);
}

CatalogUse::CatalogUse() { g_readers.fetch_add(1, std::memory_order_seq_cst); }
CatalogUse::~CatalogUse() { g_readers.fetch_sub(1, std::memory_order_seq_cst); }

size_t free_replaced_catalogs() {
  std::lock_guard<std::mutex> lock(g_installed_mutex);
  // No reader now: any that held a replaced catalog has finished, and any that starts later
  // loads the pointer stored (seq_cst) before this load.
  if (g_readers.load(std::memory_order_seq_cst) != 0) return kept().size();
  const Installed* in_use = g_installed.load(std::memory_order_seq_cst);
  auto& all = kept();
  all.erase(std::remove_if(all.begin(), all.end(), [in_use](const std::unique_ptr<Installed>& c) { return c.get() != in_use; }),
            all.end());
  return all.size();
}

Result<const ModelPreset*> find_model(const std::string& name) {
  const auto& index = current().model_index;  // every job's lookup: no scan, no copies
  const auto found = index.find(lower(trim(name)));
  if (found != index.end()) return found->second;
  const std::string base = base_model_name(trim(name));
  if (const auto variant = base.empty() ? index.end() : index.find(lower(base)); variant != index.end()) {
    return variant->second;
  }
  return find_in(model_catalog(), name, "model", "trainfit models");  // the "did you mean" error
}

const GpuSpec* gpu_in_catalog(const std::string& name) {
  const auto& index = current().gpu_index;
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
