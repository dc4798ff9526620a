#include "request_options.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/config_file.h"
#include "trainfit/json.h"
#include "trainfit/util/file.h"

namespace po = boost::program_options;

namespace trainfit::cli {

void add_request_options(po::options_description& visible, po::options_description& hidden) {
  visible.add_options()
      ("request", po::value<std::string>()->value_name("FILE"), "request JSON file ('-' = stdin); flags override it")
      ("hf-config", po::value<std::string>()->value_name("PATH"), "Hugging Face config.json giving the geometry")
      ("config", po::value<std::string>()->value_name("FILE"),
       "a framework's config file: DeepSpeed .json, torchtune .yaml, torchtitan .toml or Megatron-LM arguments; "
       "flags override it (docs/config-files.md)");
  for (const FieldSpec& field : request_fields()) {
    const std::string help = std::string(field.help) + " [" + field.accepted + "]";
    auto value = po::value<std::string>()->value_name(field.kind == FieldKind::kBool ? "BOOL" : "VALUE");
    if (field.kind == FieldKind::kBool) value->implicit_value("true");
    visible.add_options()(field.flag, value, help.c_str());
    if (std::string(field.name) != field.flag) {  // JSON names work as flags too
      auto alias = po::value<std::string>();
      if (field.kind == FieldKind::kBool) alias->implicit_value("true");
      hidden.add_options()(field.name, alias, "");
    }
  }
}

Result<std::string> read_text(const std::string& path, const char* field) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kInvalidValue, field, std::string(field) + "='" + path + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A framework config file (a regular file, bounded), its fields set over the request.
Result<ConfigFile> apply_config_file(const std::string& path, Request& request) {
  Result<std::string> text = read_regular_file(path, kMaxConfigFileBytes);
  if (!text) return make_error(text.error().code, "config", "config=" + text.error().message);
  Result<ConfigFile> file = read_config_file_text(text.value(), path);
  if (!file) return file.error();
  Result<bool> set = apply_key_values(request, to_key_values(file->request, '\n'), '\n');
  if (!set) return set.error();
  return file;
}

Result<Request> request_from_options(const po::variables_map& vm, std::vector<std::string>* notes) {
  Request request;
  if (vm.count("request")) {
    Result<std::string> text = read_text(vm["request"].as<std::string>(), "request");
    if (!text) return text.error();
    Result<Request> parsed = request_from_json(text.value());
    if (!parsed) return parsed.error();
    request = parsed.value();
  }
  if (vm.count("hf-config")) {
    Result<std::string> text = read_text(vm["hf-config"].as<std::string>(), "hf-config");
    if (!text) return text.error();
    Result<Geometry> geometry = geometry_from_hf_config(text.value());
    if (!geometry) return geometry.error();
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
    for (const char* key : {field.name, field.flag}) {
      if (vm.count(key)) {
        Result<bool> set = set_field_from_text(request, field.name, vm[key].as<std::string>());
        if (!set) return set.error();
      }
    }
  }
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
