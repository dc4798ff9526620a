// Job annotations: the SPANK options as they reach slurmctld in spank_job_env,
// and the "trainfit: key=value ..." job comment for clients without the plugin.
// One rule for both: each key sets one request field; the same field given twice
// with different values is an error naming both spellings (--llm-zero=3 and
// --llm-spec=zero_stage=0); the HF geometry comes first, then the fields of a
// framework config file (--llm-config), and options override both.
#include <cctype>
#include <string_view>

#include "trainfit/util/text.h"
#include "trainfit/admission.h"
#include "trainfit/admission/spank_env.h"
#include "trainfit/json.h"

namespace trainfit::admission {
namespace {

// Bounds on what a user may hand slurmctld: parsing and messages stay cheap.
constexpr size_t kMaxKey = 64, kMaxValue = 1024, kMaxComment = 8192;

// A value as messages show it: long ones cut ("abc…[5000 bytes]").
std::string shown(const std::string& value) {
  if (value.size() <= 80) return value;
  return value.substr(0, 64) + "…[" + std::to_string(value.size()) + " bytes]";
}

std::string mangle(std::string name) {  // Slurm replaces non-alphanumerics with '_'
  for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// "llm_micro_batch" -> the option "micro-batch" (names mangled once).
const OptionSpec* option_from_env_name(std::string_view name) {
  static const std::vector<std::pair<std::string, const OptionSpec*>> mangled = [] {
    std::vector<std::pair<std::string, const OptionSpec*>> out;
    for (const OptionSpec& o : llm_options()) out.emplace_back(mangle(std::string("llm-") + o.option), &o);
    return out;
  }();
  for (const auto& [env_name, option] : mangled) {
    if (env_name == name) return option;
  }
  return nullptr;
}

// "--llm-zero" -> "zero" (a view into the key).
std::string_view option_name(std::string_view key) {
  const size_t start = key.find_first_not_of('-');
  if (start == std::string_view::npos) return {};
  key.remove_prefix(start);
  if (key.substr(0, 4) == "llm-") key.remove_prefix(4);
  return key;
}

// Looked up for every key of every job: the names' lengths are known once, so most
// candidates are passed over on their length alone.
const OptionSpec* named_option(std::string_view key) {
  static const std::vector<std::pair<std::string_view, const OptionSpec*>> named = [] {
    std::vector<std::pair<std::string_view, const OptionSpec*>> out;
    for (const OptionSpec& o : llm_options()) {
      if (o.field[0] != '\0') out.emplace_back(o.option, &o);
    }
    return out;
  }();
  for (const auto& [name, option] : named) {
    if (name == key) return option;
  }
  return nullptr;
}

// One key=value as the user wrote it, in their syntax: "--llm-zero=3", "zero=3",
// "--llm-spec=zero_stage=0".
std::string spelled(const std::string& key, const std::string& value, Face face, bool in_spec) {
  if (face == Face::kComment) return key + "=" + value;
  if (in_spec) return "--llm-spec=" + key + "=" + value;
  return "--llm-" + key + "=" + value;
}

// Applies key=value pairs in order, refusing a field set twice with different values.
class Builder {
 public:
  Builder(Request* request, Face face) : request_(request), face_(face) { seen_.reserve(8); }

  // KEY without "--llm-" (set_option strips it once).
  Result<bool> set(const std::string& key, const std::string& value, bool in_spec) {
    if (key.size() > kMaxKey || value.size() > kMaxValue) return too_long(key, value, in_spec);
    const OptionSpec* option = in_spec ? nullptr : named_option(key);
    const std::string field_key = option != nullptr ? option->field : key;
    const FieldSpec* field = find_field(field_key);
    if (field == nullptr) return unknown(key, value, in_spec);
    const Seen* earlier = seen(field->name);
    if (earlier == nullptr) seen_.push_back(Seen{field->name, key, value, in_spec});
    if (earlier != nullptr && !same_value(field_key, earlier->value, value)) {
      return disagree(*earlier, key, value, in_spec, field->name);
    }
    Result<bool> ok = set_field_from_text(*request_, field_key, value);
    if (!ok) return not_valid(ok.error(), key, value, in_spec, field->accepted);
    return true;
  }

  Result<bool> set_option(std::string_view raw_key, std::string_view value) {
    const std::string_view key = option_name(raw_key);
    if (key == "check") return true;
    if (key == "hf-config" || key == "config") {
      const std::string name(key);
      return make_error(ErrorCode::kInvalidValue, name,
                        name + " is read on the submit host by the SPANK plugin (--llm-" + name + "); a comment "
                        "cannot carry it: give the fields instead");
    }
    if (key != "spec") return set(std::string(key), std::string(value), false);
    Result<bool> ok = true;
    for_each_part(value, ',', [&](std::string_view pair) {  // KEY=VALUE,KEY=VALUE,...
      if (trimmed(pair).empty()) return true;
      const size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        ok = make_error(ErrorCode::kMalformed, "spec",
                        "--llm-spec='" + std::string(value) + "': '" + std::string(pair) +
                            "' is not KEY=VALUE (e.g. --llm-spec=micro_batch=2,cp=2)");
      } else {
        ok = set(std::string(option_name(trimmed(pair.substr(0, eq)))), std::string(trimmed(pair.substr(eq + 1))), true);
      }
      return ok.ok();
    });
    return ok;
  }

 private:
  struct Seen {
    const char* field;  // FieldSpec::name, a static string
    std::string key, value;
    bool in_spec;
  };
  // The refusals, out of line: the accepted path's frame stays small (resolve.cpp says why).
  [[gnu::cold]] [[gnu::noinline]] Error too_long(const std::string& key, const std::string& value, bool in_spec) const {
    return make_error(ErrorCode::kInvalidValue, shown(key),
                      spelled(shown(key), shown(value), face_, in_spec) + " is too long; accepted: keys up to " +
                          std::to_string(kMaxKey) + " bytes, values up to " + std::to_string(kMaxValue));
  }
  [[gnu::cold]] [[gnu::noinline]] Error unknown(const std::string& key, const std::string& value, bool in_spec) const {
    Error e = unknown_field_error(key);
    e.message = spelled(key, value, face_, in_spec) + ": " + e.message;
    return e;
  }
  [[gnu::cold]] [[gnu::noinline]] Error disagree(const Seen& before, const std::string& key, const std::string& value,
                                                 bool in_spec, const char* field) const {
    return make_error(ErrorCode::kInconsistent, field,
                      spelled(before.key, before.value, face_, before.in_spec) + " and " +
                          spelled(key, value, face_, in_spec) + " disagree; give " + std::string(field) + " once");
  }
  [[gnu::cold]] [[gnu::noinline]] Error not_valid(Error e, const std::string& key, const std::string& value, bool in_spec,
                                                  const std::string& accepted) const {
    const std::string how = spelled(key, value, face_, in_spec);
    e.message = how.substr(0, how.size() - value.size()) + "'" + shown(value) + "' is not valid; accepted: " + accepted;
    return e;
  }

  const Seen* seen(const char* field) const {
    for (const Seen& s : seen_) {
      if (s.field == field) return &s;
    }
    return nullptr;
  }

  // Two spellings of one value ("true" and "1") are the same value.
  // Out of line: two Requests (3.6 KB) on the stack only when a field is given twice.
  [[gnu::noinline]] static bool same_value(const std::string& field, const std::string& a, const std::string& b) {
    if (a == b) return true;
    Request x, y;
    return set_field_from_text(x, field, a).ok() && set_field_from_text(y, field, b).ok() &&
           to_key_values(x) == to_key_values(y);
  }

  Request* request_;
  Face face_;
  std::vector<Seen> seen_;  // how each field was first given (a handful: a linear search)
};

bool is_check(std::string_view key) { return option_name(key) == "check"; }

}  // namespace

const std::vector<OptionSpec>& llm_options() {
  static const std::vector<OptionSpec> options = {
      {"model", "model", "NAME", "model to train, from 'trainfit models' (e.g. llama3-70b)"},
      {"seq", "seq_length", "N", "sequence length in tokens"},
      {"micro-batch", "micro_batch", "N", "sequences per micro-batch per data-parallel rank"},
      {"zero", "zero_stage", "0..3", "ZeRO stage"},
      {"recompute", "recompute", "none|selective|full", "activation recomputation"},
      {"precision", "precision", "fp32|bf16|bf16-amp|fp16-amp|fp8", "numerics"},
      {"tp", "tensor_parallel", "N", "tensor-parallel size"},
      {"pp", "pipeline_parallel", "N", "pipeline-parallel size"},
      {"framework", "framework", "NAME", "training framework whose words the options use (hf, deepspeed, torchtune, torchtitan, megatron, litgpt, custom)"},
      {"framework-version", "framework_version", "RELEASE", "the framework release the job runs, e.g. 4.45 (transformers); default: the newest modelled"},
      {"spec", "", "KEY=VAL[,KEY=VAL...]", "any trainfit request field (see 'trainfit fields')"},
      {"hf-config", "", "PATH", "Hugging Face config.json giving the geometry (read at submission)"},
      {"config", "", "FILE", "DeepSpeed .json, torchtune .yaml, torchtitan .toml or Megatron-LM arguments (read at submission)"},
      {"check", "", "", "print slurmctld's trainfit verdict (min_gpus_to_fit) and submit"},
  };
  return options;
}

std::string spank_env_name(const std::string& option) { return std::string(kSpankOptionPrefix) + mangle("llm-" + option); }

namespace {

Result<bool> read_spank_env(const std::vector<std::string>& env, Annotation* out) {
  out->found = false;
  out->face = Face::kOptions;
  const size_t prefix = kSpankOptionPrefix.size();
  std::vector<std::pair<const OptionSpec*, std::string>> options;  // a job gives a handful
  std::string geometry, config;  // applied in this order whatever the order of the environment
  for (const std::string& entry : env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const bool ours = entry.compare(0, prefix, kSpankOptionPrefix) == 0 || entry.compare(0, eq, kGeometryVariable) == 0 ||
                      entry.compare(0, eq, kConfigVariable) == 0;
    if (ours && entry.size() > kMaxComment) {
      out->found = true;  // an annotation, refused: not a job without one (which decide() would pass)
      return make_error(ErrorCode::kInvalidValue, "spank", "an --llm option of " + std::to_string(entry.size()) +
                                                               " bytes; accepted: at most " + std::to_string(kMaxComment));
    }
    if (entry.compare(0, eq, kGeometryVariable) == 0) {
      out->found = true;
      geometry = entry.substr(eq + 1);
    } else if (entry.compare(0, eq, kConfigVariable) == 0) {
      out->found = true;
      config = entry.substr(eq + 1);
    } else if (entry.compare(0, prefix, kSpankOptionPrefix) == 0 && eq > prefix) {
      const OptionSpec* option = option_from_env_name(std::string_view(entry).substr(prefix, eq - prefix));
      if (option == nullptr) continue;
      if (!is_check(option->option)) out->found = true;  // --llm-check alone annotates nothing
      if (options.empty()) options.reserve(8);  // one allocation, not one per growth; none without options
      options.emplace_back(option, entry.substr(eq + 1));
    }
  }
  if (options.empty() && geometry.empty() && config.empty()) return true;  // most jobs: no --llm-* option
  // The files first (the geometry, then the config file's fields): options override them.
  for (const std::string* spec : {&geometry, &config}) {
    if (spec->empty()) continue;
    Result<bool> set = apply_key_values(out->request, *spec, ',');
    if (!set) return set.error();
  }
  Builder builder(&out->request, Face::kOptions);
  std::string hf_config;  // its path, as given
  for (const auto& [option, value] : options) {
    const std::string name = option->option;
    if (name == "hf-config") hf_config = value;
    if (name == "hf-config" || name == "config") continue;  // carried as TRAINFIT_GEOMETRY / TRAINFIT_CONFIG
    out->check |= is_check(option->option);
    Result<bool> set = builder.set_option(option->option, value);
    if (!set) return set.error();
  }
  if (hf_config.empty() && !geometry.empty()) hf_config = "(its config.json)";
  if (hf_config.empty()) return true;  // one source of geometry at most: nothing to compare
  return check_one_geometry_source(out->request, hf_config, {spell_key("model", Face::kOptions), "--llm-hf-config"});
}

// Settings of the estimate that are the site's, not facts about the job: the runtime overheads
// (CUDA context, NCCL buffers, allocator reserve) are memory every job uses, so an annotation
// may not switch them off (it would only lower the figure the gate judges). A value equal to
// the site's is harmless and accepted.
struct SiteSetting {
  const char* field;
  std::optional<bool> Request::*member;
  bool site_value;
  const char* what;
};
constexpr SiteSetting kSiteSettings[] = {
    {"runtime_overhead", &Request::runtime_overhead, true,
     "the runtime overheads (CUDA context, NCCL buffers, allocator reserve) are memory every job uses"}};

Result<bool> refuse_site_settings(const Annotation& a) {
  for (const SiteSetting& setting : kSiteSettings) {
    const std::optional<bool>& value = a.request.*setting.member;
    if (!value || *value == setting.site_value) continue;
    const std::string key = spell_key(setting.field, a.face);
    return make_error(ErrorCode::kInvalidValue, setting.field,
                      key + "=" + (*value ? "true" : "false") + ": a setting of the estimate that is the site's, not "
                          "a job's (" + setting.what + "); accepted in an annotation: " +
                          (setting.site_value ? "true" : "false") + ", or leave it out");
  }
  return true;
}

}  // namespace

Result<bool> annotation_from_spank_env(const std::vector<std::string>& env, Annotation* out) {
  Result<bool> read = read_spank_env(env, out);
  if (!read || !out->found) return read;
  return refuse_site_settings(*out);
}

namespace {
// Out of line, so that annotation_of_job's frame holds no Request (a stack page of slurmctld's
// fresh RPC thread costs a page fault: resolve.cpp).
[[gnu::noinline]] void forget_fields(Request* request) { *request = Request(); }

// A comment beside --llm-* options: it must say what they say.
[[gnu::noinline]] Result<bool> comment_agrees(const std::string& comment, const Annotation& options) {
  Annotation from_comment;
  Result<bool> read = annotation_from_comment(comment, &from_comment);
  if (!from_comment.found) return true;
  if (!read || request_to_json(from_comment.request) != request_to_json(options.request)) {
    return make_error(ErrorCode::kInconsistent, "comment",
                      "the job's comment annotation ('" + truncated(comment, 200) + "') and its --llm-* options (" +
                          truncated(to_key_values(options.request), 200) + ") disagree; give one of them");
  }
  return true;
}
}  // namespace

Result<bool> annotation_of_job(const std::vector<std::string>& env, const std::string* comment, Annotation* out) {
  Result<bool> options = annotation_from_spank_env(env, out);
  if (!options) return options;
  if (comment == nullptr) return true;
  if (!out->found) {  // the comment is the annotation; --llm-check still asks for the verdict
    const bool check = out->check;
    Result<bool> read = annotation_from_comment(*comment, out);  // in place: no Request moved
    if (!read) forget_fields(&out->request);  // a refused comment's half-read fields are not its annotation
    out->check |= check;
    return read;
  }
  return comment_agrees(*comment, *out);
}

namespace {

Result<bool> read_comment(const std::string& comment, Annotation* out) {
  const size_t start = std::min(comment.find_first_not_of(" \t\r\n\v\f"), comment.size());
  // "trainfit:" within the comment's first 64 bytes, after blanks, in any case.
  out->found = start + 9 <= std::min<size_t>(comment.size(), 64) &&
               equals_lower(std::string_view(comment).substr(start, 9), "trainfit:");
  out->face = Face::kComment;
  if (!out->found) return true;
  if (comment.size() > kMaxComment) {
    return make_error(ErrorCode::kInvalidValue, "comment",
                      "the trainfit comment is " + std::to_string(comment.size()) + " bytes; accepted: at most " +
                          std::to_string(kMaxComment));
  }
  constexpr const char* kBlanks = " \t\n\r\v\f";
  const std::string_view body = trimmed(comment).substr(9);  // after "trainfit:"
  Builder builder(&out->request, Face::kComment);
  for (size_t at = body.find_first_not_of(kBlanks); at != std::string_view::npos; at = body.find_first_not_of(kBlanks, at)) {
    const size_t end = std::min(body.find_first_of(kBlanks, at), body.size());
    const std::string_view token = body.substr(at, end - at);
    at = end;
    const size_t eq = token.find('=');
    if (is_check(token.substr(0, eq))) {
      bool on = true;
      if (eq != std::string_view::npos && !parse_bool(std::string(token.substr(eq + 1)), &on)) {
        return make_error(ErrorCode::kInvalidValue, "check",
                          "check='" + std::string(token.substr(eq + 1)) + "' is not valid; accepted: true|false");
      }
      out->check = on;
      continue;
    }
    if (eq == std::string_view::npos) {
      return make_error(ErrorCode::kMalformed, std::string(token),
                        "'" + std::string(token) + "' is not key=value (e.g. --comment=\"trainfit: model=llama3-70b seq=8192\")");
    }
    Result<bool> set = builder.set_option(token.substr(0, eq), token.substr(eq + 1));
    if (!set) return set.error();
  }
  return true;
}

}  // namespace

Result<bool> annotation_from_comment(const std::string& comment, Annotation* out) {
  Result<bool> read = read_comment(comment, out);
  if (!read || !out->found) return read;
  return refuse_site_settings(*out);
}

std::string describe(const Request& request) { return to_key_values(request, ' '); }

std::string spell_key(const std::string& field, Face face) {
  const FieldSpec* spec = find_field(field);
  const std::string name = spec != nullptr ? spec->name : field;
  for (const OptionSpec& o : llm_options()) {
    if (name == o.field) return face == Face::kOptions ? std::string("--llm-") + o.option : std::string(o.option);
  }
  if (name == "num_gpus") return face == Face::kOptions ? "--gpus" : "the GPU request (--gpus)";
  return face == Face::kOptions ? "--llm-spec=" + name : name;
}

}  // namespace trainfit::admission
