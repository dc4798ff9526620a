#include "request_options.h"

#include <sys/stat.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "command_options.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/config_file.h"
#include "trainfit/json.h"
#include "trainfit/util/file.h"
#include "trainfit/util/text.h"

namespace po = boost::program_options;

namespace trainfit::cli {
namespace {

// The JSON name with hyphens, as a flag is usually written (seq-length, num-gpus).
std::string hyphenated(const char* name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// The spellings of one field on the command line: its flag, its JSON name and the JSON name
// with hyphens (the last two hidden), each once.
std::vector<std::string> spellings(const FieldSpec& field) {
  std::vector<std::string> out = {field.flag};
  for (const std::string& other : {std::string(field.name), hyphenated(field.name)}) {
    if (std::find(out.begin(), out.end(), other) == out.end()) out.push_back(other);
  }
  return out;
}

// --flag for one request field, and its other spellings, hidden.
void add_field_option(const FieldSpec& field, po::options_description& section, po::options_description& hidden) {
  const std::string help = std::string(field.help) + " [" + field.accepted + "]";
  const std::vector<std::string> names = spellings(field);
  for (size_t i = 0; i < names.size(); ++i) {
    auto value = po::value<std::string>();
    if (i == 0) value->value_name(field.kind == FieldKind::kBool ? "BOOL" : "VALUE");
    if (field.kind == FieldKind::kBool) value->implicit_value("true");
    if (i == 0) section.add_options()(names[i].c_str(), value, help.c_str());
    else hidden.add_options()(names[i].c_str(), value, "");
  }
}
}  // namespace

constexpr const char* kFilesGroup = "request files";
constexpr FieldGroup kGroupOrder[] = {FieldGroup::kModel, FieldGroup::kTraining, FieldGroup::kAdapters,
                                      FieldGroup::kParallelism, FieldGroup::kCluster};

std::vector<std::string> request_option_groups() {
  std::vector<std::string> out = {kFilesGroup};
  for (const FieldGroup group : kGroupOrder) out.push_back(field_group_title(group));
  return out;
}

void add_request_options(po::options_description& visible, po::options_description& hidden) {
  po::options_description files = help_group(kFilesGroup);
  files.add_options()
      ("request", po::value<std::string>()->value_name("FILE"), "request JSON file ('-' = stdin); flags override it")
      ("hf-config", po::value<std::string>()->value_name("PATH"),
       "Hugging Face config.json, or a model folder holding one, giving the geometry (not with --model)")
      ("config", po::value<std::string>()->value_name("FILE"),
       "a framework's config file: DeepSpeed .json, torchtune .yaml, torchtitan .toml or Megatron-LM arguments; "
       "flags override it");
  visible.add(files);
  for (const FieldGroup group : kGroupOrder) {
    po::options_description section = help_group(field_group_title(group));
    for (const FieldSpec& field : request_fields()) {
      if (field.group == group) add_field_option(field, section, hidden);
    }
    visible.add(section);
  }
}

Result<std::string> read_input(const std::string& path, const char* field, size_t max_bytes) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  Result<std::string> text = read_regular_file(path, max_bytes);
  if (!text) return file_problem(field, path, text.error().code, text.error().reason);
  return text;
}

Error file_problem(const char* field, const std::string& path, ErrorCode code, const std::string& reason) {
  return make_error(code, field, std::string(field) + "='" + quoted_path(path) + "': " + reason);
}

// A Hugging Face model folder (as from_pretrained takes) holds its config.json.
std::string hf_config_file(const std::string& path) {
  struct stat st;
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? path + "/config.json" : path;
}

// A framework config file (a regular file, bounded), its fields set over the request.
Result<ConfigFile> apply_config_file(const std::string& path, Request& request) {
  Result<std::string> text = read_input(path, "config", kMaxConfigFileBytes);
  if (!text) return text.error();
  Result<ConfigFile> file = read_config_file_text(text.value(), path);
  if (!file) return file.error();
  Result<bool> set = apply_key_values(request, to_key_values(file->request, '\n'), '\n');
  if (!set) return set.error();
  return file;
}

Result<Request> request_from_options(const po::variables_map& vm, std::vector<std::string>* notes) {
  Request request;
  if (vm.count("request")) {
    Result<std::string> text = read_input(vm["request"].as<std::string>(), "request", kMaxRequestFileBytes);
    if (!text) return text.error();
    Result<Request> parsed = request_from_json(text.value());
    if (!parsed) return parsed.error();
    request = parsed.value();
  }
  if (vm.count("hf-config")) {
    const std::string path = hf_config_file(vm["hf-config"].as<std::string>());
    Result<std::string> text = read_input(path, "hf-config", admission::kMaxHfConfigBytes);
    if (!text) return text.error();
    Result<Geometry> geometry = geometry_from_hf_config(text.value());
    if (!geometry) {
      const Error& e = geometry.error();
      return file_problem("hf-config", path, e.code, e.reason.empty() ? e.message : e.reason);
    }
    set_geometry(request, geometry.value());
    request.model_label = hf_config_label(text.value(), vm["hf-config"].as<std::string>());
  }
  std::optional<ConfigFile> config;
  if (vm.count("config")) {
    Result<ConfigFile> file = apply_config_file(vm["config"].as<std::string>(), request);
    if (!file) return file.error();
    config = std::move(file).value();
  }
  for (const FieldSpec& field : request_fields()) {
    std::string given;  // the spelling that gave the field, each field once (as a repeated flag is)
    for (const std::string& key : spellings(field)) {
      if (!vm.count(key)) continue;
      if (!given.empty()) {
        return make_error(ErrorCode::kInvalidValue, field.name,
                          std::string(field.name) + " is given twice, as --" + given + " and --" + key + "; give it once");
      }
      given = key;
      Result<bool> set = set_field_from_text(request, field.name, vm[key].as<std::string>());
      if (!set) return set.error();
    }
  }
  const std::string hf_config = vm.count("hf-config") ? vm["hf-config"].as<std::string>() : "";
  if (Result<bool> one = check_one_geometry_source(request, hf_config, {"--model", "--hf-config"}); !one) return one.error();
  if (config) {
    Result<std::vector<std::string>> batch = apply_global_batch(*config, request);
    if (!batch) return make_error(batch.error().code, batch.error().field, vm["config"].as<std::string>() + ": " + batch.error().message);
    if (notes != nullptr) {
      const std::string prefix = "config '" + vm["config"].as<std::string>() + "' (" + config->kind + "): ";
      for (const std::string& note : batch.value()) notes->push_back(prefix + note);
      for (const std::string& note : config_file_notes(*config)) notes->push_back(prefix + note);
    }
  }
  return request;
}

}  // namespace trainfit::cli
