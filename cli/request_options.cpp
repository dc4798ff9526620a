#include "request_options.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/json.h"

namespace po = boost::program_options;

namespace trainfit::cli {

void add_request_options(po::options_description& visible, po::options_description& hidden) {
  visible.add_options()
      ("request", po::value<std::string>()->value_name("FILE"), "request JSON file ('-' = stdin); flags override it")
      ("hf-config", po::value<std::string>()->value_name("PATH"), "Hugging Face config.json giving the geometry");
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

Result<Request> request_from_options(const po::variables_map& vm) {
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
  }
  for (const FieldSpec& field : request_fields()) {
    for (const char* key : {field.name, field.flag}) {
      if (vm.count(key)) {
        Result<bool> set = set_field_from_text(request, field.name, vm[key].as<std::string>());
        if (!set) return set.error();
      }
    }
  }
  return request;
}

}  // namespace trainfit::cli
