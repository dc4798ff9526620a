// Site catalogs: gpus.d/*.json and models.d/*.json merged onto the built-in catalogs.
// Each entry is validated field by field; every problem names the file, the line of the
// offending field (or entry), the field, the value and what is accepted. No I/O here.
#include <cmath>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "catalog_entries.h"
#include "json/parse_errors.h"
#include "trainfit/util/text.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace {

using nlohmann::json;
using namespace catalog_entries;

// ---- Where things are in the text: a structural scan (strings skipped) that records the
// byte offset of each top-level key, of each entry of the catalog array and of its keys.

struct EntrySpan {
  size_t start = 0;
  std::map<std::string, size_t> keys;
};
struct Layout {
  std::map<std::string, size_t> top_keys;
  std::vector<EntrySpan> entries;
};

Layout scan(const std::string& text, const std::string& array_key) {
  Layout out;
  std::string stack;        // '{' and '[' as opened
  std::string last_top_key;  // the top-level key whose value is being read
  bool in_catalog_array = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i;
      std::string content;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        else content += text[i];
      }
      size_t j = i + 1;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) ++j;
      if (j >= text.size() || text[j] != ':') continue;
      if (stack == "{") {
        out.top_keys.emplace(content, start);
        last_top_key = content;
      } else if (stack == "{[{" && in_catalog_array && !out.entries.empty()) {
        out.entries.back().keys.emplace(content, start);
      }
    } else if (c == '{' || c == '[') {
      stack += c;
      if (stack == "{[") in_catalog_array = last_top_key == array_key;
      if (stack == "{[{" && in_catalog_array) out.entries.push_back(EntrySpan{i, {}});
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    }
  }
  return out;
}

int line_at(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

std::string shown(const json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.size() > 64) text = text.substr(0, 61) + "...";
  return text;
}

// ---- One entry's validation.

struct Field {
  const char* name;
  enum Kind { kName, kNames, kHfIds, kText, kCount, kBool, kNumber, kMlp, kNorm, kBias, kArchitecture } kind;
  bool required;
  double min, max;  // for kCount and kNumber
};

constexpr double kNoMax = 1e300;

const std::vector<Field>& gpu_fields() {
  static const std::vector<Field> fields = {
      {"name", Field::kName, true, 0, 0},
      {"aliases", Field::kNames, false, 0, 0},
      {"description", Field::kText, false, 0, 0},
      {"capacity_bytes", Field::kNumber, true, 1073741824.0, 17592186044416.0},  // 1 GiB .. 16 TiB
      {"source", Field::kText, false, 0, 0},
      {"device_names", Field::kNames, false, 0, 0},
      {"device_names_source", Field::kText, false, 0, 0},
      {"architecture", Field::kArchitecture, false, 0, 0},
  };
  return fields;
}

const std::vector<Field>& model_fields() {
  static const std::vector<Field> fields = {
      {"name", Field::kName, true, 0, 0},
      {"aliases", Field::kNames, false, 0, 0},
      {"hf_ids", Field::kHfIds, false, 0, 0},
      {"description", Field::kText, false, 0, 0},
      {"source", Field::kText, false, 0, 0},
      {"layers", Field::kCount, true, 1, 100000},
      {"hidden", Field::kCount, true, 1, 1048576},
      {"heads", Field::kCount, true, 1, 65536},
      {"kv_heads", Field::kCount, false, 1, 65536},
      {"ffn", Field::kCount, true, 1, 4194304},
      {"vocab", Field::kCount, true, 1, 16777216},
      {"tied", Field::kBool, false, 0, 0},
      {"mlp", Field::kMlp, false, 0, 0},
      {"norm", Field::kNorm, false, 0, 0},
      {"bias", Field::kBias, false, 0, 0},
      {"learned_positions", Field::kCount, false, 0, 16777216},
      {"dropout", Field::kBool, false, 0, 0},
      {"experts", Field::kCount, false, 0, 65536},
      {"top_k", Field::kCount, false, 0, 65536},
      {"moe_ffn", Field::kCount, false, 0, 4194304},
      {"head_dim", Field::kCount, false, 0, 65536},
      {"qk_norm", Field::kBool, false, 0, 0},
      {"sandwich_norm", Field::kBool, false, 0, 0},
      {"expected_params", Field::kNumber, false, 0, 1e16},
      {"expected_params_source", Field::kText, false, 0, 0},
  };
  return fields;
}

std::string field_list(const std::vector<Field>& fields) {
  std::string out;
  for (const Field& f : fields) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string number_text(double x) {
  if (std::floor(x) == x && std::fabs(x) < 1e18) return std::to_string(static_cast<long long>(x));
  return std::to_string(x);
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

// What is wrong with this value of this field, as "FIELD='VALUE' ...; accepted: ...".
Result<bool> check_field(const Field& f, const json& v) {
  const auto bad = [&](const std::string& accepted) {
    return make_error(ErrorCode::kInvalidValue, f.name, std::string(f.name) + "='" + shown(v) + "' is not valid; accepted: " + accepted);
  };
  switch (f.kind) {
    case Field::kName:
      if (!v.is_string() || !valid_name(v.get<std::string>())) {
        return bad("a name of 1 to 64 characters from A-Z a-z 0-9 . _ - +");
      }
      return true;
    case Field::kNames:
      if (!v.is_array()) return bad("an array of strings");
      for (const json& item : v) {
        if (!item.is_string() || trim(item.get<std::string>()).empty() || item.get<std::string>().size() > 128) {
          return make_error(ErrorCode::kInvalidValue, f.name, std::string(f.name) + " entry '" + shown(item) +
                                                                 "' is not valid; accepted: a non-empty string of at most 128 characters");
        }
      }
      return true;
    case Field::kHfIds:
      if (!v.is_array()) return bad("an array of Hugging Face Hub ids (ORG/NAME)");
      for (const json& item : v) {
        if (!item.is_string() || !catalog_entries::valid_hf_id(item.get<std::string>())) {
          return make_error(ErrorCode::kInvalidValue, f.name, std::string(f.name) + " entry '" + shown(item) +
                                                                 "' is not valid; accepted: a Hugging Face Hub id ORG/NAME, each "
                                                                 "part 1 to 96 characters from A-Z a-z 0-9 . _ -");
        }
      }
      return true;
    case Field::kText:
      if (!v.is_string()) return bad("a string");
      return true;
    case Field::kBool:
      if (!v.is_boolean()) return bad("true|false");
      return true;
    case Field::kCount:
      if (!v.is_number_integer() || v.get<double>() < f.min || v.get<double>() > f.max) {
        return bad("an integer from " + number_text(f.min) + " to " + number_text(f.max));
      }
      return true;
    case Field::kNumber:
      if (!v.is_number() || v.get<double>() < f.min || v.get<double>() > f.max) {
        if (std::string(f.name) == "capacity_bytes") {
          return bad("bytes, from 1073741824 (1 GiB) to 17592186044416 (16 TiB): nvidia-smi memory.total in MiB x 1048576");
        }
        return bad("a number from " + number_text(f.min) + " to " + number_text(f.max));
      }
      return true;
    case Field::kMlp: {
      Mlp x;
      if (!v.is_string() || !word_value(kMlpWords, v.get<std::string>(), &x)) return bad(accepted_words(kMlpWords));
      return true;
    }
    case Field::kNorm: {
      Norm x;
      if (!v.is_string() || !word_value(kNormWords, v.get<std::string>(), &x)) return bad(accepted_words(kNormWords));
      return true;
    }
    case Field::kBias: {
      Bias x;
      if (!v.is_string() || !word_value(kBiasWords, v.get<std::string>(), &x)) return bad(accepted_words(kBiasWords));
      return true;
    }
    case Field::kArchitecture: {
      GpuArchitecture x;
      if (!v.is_string() || !word_value(kArchitectureWords, v.get<std::string>(), &x)) return bad(accepted_words(kArchitectureWords));
      return true;
    }
  }
  return true;
}

// Checks between fields of a model that each passed on its own; the error's field is the one to fix.
Result<bool> check_model_geometry(const ModelPreset& m) {
  const Geometry& g = m.geometry;
  const auto inconsistent = [](const char* field, const std::string& message) {
    return make_error(ErrorCode::kInconsistent, field, message);
  };
  if (g.kv_heads > g.heads || g.heads % g.kv_heads != 0) {
    return inconsistent("kv_heads", "kv_heads='" + std::to_string(g.kv_heads) + "' is not valid; accepted: a divisor of heads (" +
                                        std::to_string(g.heads) + ")");
  }
  if (g.head_dim == 0 && g.hidden % g.heads != 0) {
    return inconsistent("heads", "heads='" + std::to_string(g.heads) + "' does not divide hidden (" + std::to_string(g.hidden) +
                                     "); accepted: a divisor of hidden, or give head_dim");
  }
  if (g.experts > 0 && (g.top_k < 1 || g.top_k > g.experts)) {
    return inconsistent("top_k", "top_k='" + std::to_string(g.top_k) + "' is not valid with experts=" +
                                     std::to_string(g.experts) + "; accepted: an integer from 1 to experts");
  }
  if (g.experts == 0 && g.top_k != 0) {
    return inconsistent("top_k", "top_k='" + std::to_string(g.top_k) + "' is set without experts; accepted: 0 for a dense model");
  }
  return true;
}

template <typename Entry>
struct Parsed {
  Entry entry;
  std::string where;  // "FILE:LINE" of the entry
  int line = 0;
};

// A problem at a line of a catalog file: "FILE:LINE: reason"; field: the catalog field at
// fault ("" when the file or entry as a whole is).
Error problem_at(const CatalogText& file, int line, std::string field, std::string reason,
                 ErrorCode code = ErrorCode::kInvalidValue) {
  return located_error(code, std::move(field), file.path + ":" + std::to_string(line), line, std::move(reason));
}

// The file as JSON, or nothing with the problem appended at the line the parser stopped at.
std::optional<json> parse_document(const CatalogText& file, std::vector<Error>* problems) {
  try {
    return json::parse(file.text);
  } catch (const json::parse_error& e) {
    const size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    problems->push_back(problem_at(file, line_at(file.text, byte), "", "not valid JSON: " + parse_error_reason(e),
                                   ErrorCode::kMalformed));
  } catch (const std::exception& e) {
    problems->push_back(problem_at(file, 1, "", std::string("not valid JSON: ") + e.what(), ErrorCode::kMalformed));
  }
  return std::nullopt;
}

// Whether the document is {"ARRAY_KEY": [...]}; else the problem, with a hint when the
// file belongs in the other folder.
bool has_entry_array(const json& doc, const CatalogText& file, const char* array_key, const char* other_key,
                     std::vector<Error>* problems) {
  if (doc.is_object() && doc.contains(array_key) && doc[array_key].is_array()) return true;
  std::string hint;
  if (doc.is_object() && doc.contains(other_key)) {
    hint = " (it has '" + std::string(other_key) + "': it belongs in " + other_key + ".d/)";
  }
  problems->push_back(problem_at(file, 1, array_key, "has no \"" + std::string(array_key) + "\" array" + hint + "; accepted: {\"" +
                                                         array_key + "\": [{\"name\": ...}, ...]}, the format of conf/" +
                                                         array_key + ".json", ErrorCode::kMissing));
  return false;
}

// One entry of the array, where it is in the file and how messages name it.
struct EntryPlace {
  const CatalogText& file;
  const EntrySpan& span;
  std::string label;  // "gpus[2] 'h200-site'"
  std::string at(size_t offset) const { return file.path + ":" + std::to_string(line_at(file.text, offset)); }
  std::string entry_at() const { return at(span.start); }
  size_t field_offset(const std::string& key) const {
    const auto pos = span.keys.find(key);
    return pos == span.keys.end() ? span.start : pos->second;
  }
  // "FILE:LINE: LABEL: reason" at the entry, or at the line of one of its fields.
  Error problem(const std::string& reason, ErrorCode code = ErrorCode::kInvalidValue) const {
    return problem_at(file, line_at(file.text, span.start), "", label + ": " + reason, code);
  }
  Error field_problem(const std::string& field, const std::string& reason, ErrorCode code = ErrorCode::kInvalidValue) const {
    return problem_at(file, line_at(file.text, field_offset(field)), field, label + ": " + reason, code);
  }
};

// Every problem of one entry's fields on their own: unknown, missing, invalid.
void check_fields(const json& e, const EntryPlace& place, const char* kind, const std::vector<Field>& fields,
                  std::vector<Error>* problems) {
  std::vector<std::string> names;
  for (const Field& f : fields) names.push_back(f.name);
  for (const auto& [key, value] : e.items()) {
    if (key.rfind('_', 0) == 0) continue;
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    const std::string hint = did_you_mean(key, names);
    problems->push_back(place.field_problem(key, "unknown field '" + key + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                                     "; accepted: " + field_list(fields), ErrorCode::kUnknownField));
  }
  for (const Field& f : fields) {
    if (!e.contains(f.name)) {
      if (f.required) {
        Error missing = place.problem(std::string(f.name) + " is missing; every " + kind + " needs " +
                                          (std::string(kind) == "gpu" ? "name and capacity_bytes" : "name, layers, hidden, heads, ffn and vocab"),
                                      ErrorCode::kMissing);
        missing.field = f.name;
        problems->push_back(std::move(missing));
      }
      continue;
    }
    Result<bool> valid = check_field(f, e[f.name]);
    if (!valid) problems->push_back(place.field_problem(f.name, valid.error().message, valid.error().code));
  }
}

// The entry built from fields that each passed, checked as a whole; nothing if it is not valid.
template <typename Entry>
std::optional<Entry> entry_from(const json& e, const EntryPlace& place, std::vector<Error>* problems) {
  Entry entry;
  try {
    if constexpr (std::is_same_v<Entry, GpuSpec>) entry = gpu_from(e);
    else entry = model_from(e);
  } catch (const std::exception& ex) {
    problems->push_back(place.problem(ex.what()));
    return std::nullopt;
  }
  if constexpr (std::is_same_v<Entry, ModelPreset>) {
    Result<bool> consistent = check_model_geometry(entry);
    if (!consistent) {
      problems->push_back(place.field_problem(consistent.error().field, consistent.error().message, consistent.error().code));
      return std::nullopt;
    }
  }
  return entry;
}

// Every valid entry of one file; problems appended for the rest.
template <typename Entry>
std::vector<Parsed<Entry>> parse_file(const CatalogText& file, const char* array_key, const char* other_key,
                                      const char* kind, const std::vector<Field>& fields,
                                      std::vector<Error>* problems) {
  std::vector<Parsed<Entry>> out;
  std::optional<json> doc = parse_document(file, problems);
  if (!doc || !has_entry_array(*doc, file, array_key, other_key, problems)) return out;
  const Layout layout = scan(file.text, array_key);
  const EntrySpan no_span{0, {}};
  for (const auto& [key, value] : doc->items()) {
    if (key == array_key || key.rfind('_', 0) == 0) continue;
    const auto pos = layout.top_keys.find(key);
    problems->push_back(problem_at(file, line_at(file.text, pos == layout.top_keys.end() ? 0 : pos->second), key,
                                   "unknown top-level field '" + key + "'; accepted: " + array_key +
                                       ", and names starting with '_' (comments)",
                                   ErrorCode::kUnknownField));
  }
  std::map<std::string, std::string> seen;  // lower-case name -> where, within this file
  const json& entries = (*doc)[array_key];
  for (size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const bool named = e.is_object() && e.contains("name") && e["name"].is_string();
    const EntryPlace place{file, i < layout.entries.size() ? layout.entries[i] : no_span,
                           std::string(array_key) + "[" + std::to_string(i) + "]" +
                               (named ? " '" + e["name"].get<std::string>() + "'" : "")};
    if (!e.is_object()) {
      problems->push_back(problem_at(file, line_at(file.text, place.span.start), "",
                                     place.label + " is " + e.type_name() + "; accepted: an object {\"name\": ...}"));
      continue;
    }
    const size_t before = problems->size();
    check_fields(e, place, kind, fields, problems);
    if (problems->size() != before) continue;
    std::optional<Entry> entry = entry_from<Entry>(e, place, problems);
    if (!entry) continue;
    const std::string key = lower(entry->name);
    if (seen.count(key)) {
      Error twice = place.problem(std::string(kind) + " '" + entry->name + "' is defined twice in this file (first at " + seen[key] +
                                      "); accepted: one entry per name",
                                  ErrorCode::kInconsistent);
      twice.field = "name";
      problems->push_back(std::move(twice));
      continue;
    }
    seen[key] = place.entry_at();
    out.push_back(Parsed<Entry>{std::move(*entry), place.entry_at(), line_at(file.text, place.span.start)});
  }
  return out;
}

std::string gib_text(double bytes) { return format_gib(bytes) + " GiB"; }

std::vector<std::string> spellings_of(const GpuSpec& gpu) {
  std::vector<std::string> out;
  for (const std::string& s : gpu_spellings(gpu)) out.push_back(gpu_key(s));
  return out;
}
std::vector<std::string> spellings_of(const ModelPreset& model) {
  std::vector<std::string> out = {lower(trim(model.name))};
  for (const std::string& alias : model.aliases) out.push_back(lower(trim(alias)));
  for (const std::string& id : model.hf_ids) out.push_back(lower(trim(id)));
  return out;
}

std::string change_of(const GpuSpec& before, const GpuSpec& after) {
  return "capacity " + gib_text(before.capacity_bytes) + " -> " + gib_text(after.capacity_bytes);
}
std::string change_of(const ModelPreset& before, const ModelPreset& after) {
  const Geometry &a = before.geometry, &b = after.geometry;
  return "layers " + std::to_string(a.layers) + " -> " + std::to_string(b.layers) + ", hidden " +
         std::to_string(a.hidden) + " -> " + std::to_string(b.hidden);
}
std::string summary_of(const GpuSpec& gpu) { return "capacity " + gib_text(gpu.capacity_bytes); }
std::string summary_of(const ModelPreset& m) {
  return std::to_string(m.geometry.layers) + " layers, hidden " + std::to_string(m.geometry.hidden);
}

// Merges the files' entries onto `catalog` (origins: "built-in" or FILE:LINE), then checks
// that every spelling names one entry.
template <typename Entry>
void merge(std::vector<Entry>* catalog, const std::vector<CatalogText>& files, const char* array_key,
           const char* other_key, const char* kind, const std::vector<Field>& fields, CatalogSet* set) {
  struct Place {
    std::string where;  // FILE:LINE of a site entry; "" = built in
    int line = 0;
  };
  std::vector<Place> site_at(catalog->size());
  const auto origin = [&](size_t i) {
    return site_at[i].where.empty() ? std::string("the built-in entry") : "the entry at " + site_at[i].where;
  };
  for (const CatalogText& file : files) {
    for (Parsed<Entry>& parsed : parse_file<Entry>(file, array_key, other_key, kind, fields, &set->problems)) {
      size_t index = catalog->size();
      for (size_t i = 0; i < catalog->size(); ++i) {
        if (lower((*catalog)[i].name) == lower(parsed.entry.name)) index = i;
      }
      if (index < catalog->size()) {
        set->notes.push_back(parsed.where + ": " + kind + " '" + parsed.entry.name + "' overrides " + origin(index) +
                             " (" + change_of((*catalog)[index], parsed.entry) + ")");
        (*catalog)[index] = std::move(parsed.entry);
        site_at[index] = {parsed.where, parsed.line};
      } else {
        set->notes.push_back(parsed.where + ": " + kind + " '" + parsed.entry.name + "' added (" +
                             summary_of(parsed.entry) + ")");
        catalog->push_back(std::move(parsed.entry));
        site_at.push_back({parsed.where, parsed.line});
      }
    }
  }
  std::map<std::string, size_t> owner;  // spelling -> entry
  for (size_t i = 0; i < catalog->size(); ++i) {
    for (const std::string& spelling : spellings_of((*catalog)[i])) {
      const auto [it, fresh] = owner.emplace(spelling, i);
      if (fresh || it->second == i) continue;
      // Report at the site entry (built-in entries never clash with each other).
      const bool later_is_site = !site_at[i].where.empty();
      const size_t site = later_is_site ? i : it->second, other = later_is_site ? it->second : i;
      set->problems.push_back(located_error(ErrorCode::kInconsistent, "aliases", site_at[site].where, site_at[site].line,
                                            std::string(kind) + " '" + (*catalog)[site].name + "': the spelling '" + spelling +
                                                "' already names " + kind + " '" + (*catalog)[other].name + "' (" +
                                                origin(other) + "); accepted: names, aliases and device names that name one " +
                                                kind + " (to replace an entry, use its name)"));
    }
  }
}

}  // namespace

CatalogSet merge_catalogs(const std::vector<CatalogText>& gpu_files, const std::vector<CatalogText>& model_files) {
  CatalogSet set;
  set.gpus = builtin_gpus();
  set.models = builtin_models();
  merge(&set.gpus, gpu_files, "gpus", "models", "gpu", gpu_fields(), &set);
  merge(&set.models, model_files, "models", "gpus", "model", model_fields(), &set);
  return set;
}

}  // namespace trainfit
