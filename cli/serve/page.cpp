#include "page.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainfit/catalog.h"
#include "trainfit/config_file.h"
#include "trainfit/json.h"
#include "trainfit/request.h"

namespace trainfit::cli {

namespace {

constexpr const char* kConfigPath = "/v1/config";

using ordered_json = nlohmann::ordered_json;




const PageAsset* find_asset(std::string_view path) {
  for (std::size_t i = 0; i < kPageAssetCount; ++i) {
    if (path == kPageAssets[i].path) return &kPageAssets[i];
  }
  return nullptr;
}

bool has_json_extension(const std::string& name) {
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos) return false;
  std::string ext = name.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == "json";
}

// A Hugging Face config.json, told from a DeepSpeed config by its parsed keys (the same
// rule the DeepSpeed reader uses to refuse one): an object with model_type or architectures.
bool is_hf_config(const std::string& name, const std::string& text) {
  if (!has_json_extension(name) || json_member_count(text) > kMaxJsonMembers) return false;  // the reader refuses it
  const ordered_json doc = ordered_json::parse(text, nullptr, false);
  return doc.is_object() && (doc.contains("model_type") || doc.contains("architectures"));
}

struct Mapped {
  std::string kind;
  std::vector<std::string> notes;
  std::vector<std::string> ignored, not_modelled, left_unset, unrecognised;
};

// As `trainfit estimate --hf-config`: the geometry replaces the preset, whose name and
// parameter count would otherwise still describe another model.
Result<Mapped> map_hf_config(const std::string& name, const std::string& text, Request& request) {
  Result<Geometry> geometry = geometry_from_hf_config(text);
  if (!geometry) return geometry.error();
  Mapped mapped;
  mapped.kind = "hf-config";
  if (request.model || request.model_params_b) {
    mapped.notes.push_back("model and model_params_b cleared: the config.json gives the geometry");
  }
  request.model.reset();
  request.model_params_b.reset();
  set_geometry(request, geometry.value());
  request.model_label = hf_config_label(text, name);  // named as the CLI names the same file
  return mapped;
}

// As `trainfit estimate --request R --config FILE`: the file's fields over the request,
// then its global batch once the GPU count is known.
Result<Mapped> map_framework_config(const std::string& name, const std::string& text, Request& request) {
  Result<ConfigFile> file = read_config_file_text(text, name);
  if (!file) return file.error();
  Result<bool> set = apply_key_values(request, to_key_values(file->request, '\n'), '\n');
  if (!set) return set.error();
  Result<std::vector<std::string>> batch = apply_global_batch(file.value(), request);
  if (!batch) return make_error(batch.error().code, batch.error().field, name + ": " + batch.error().message);
  Mapped mapped;
  mapped.kind = file->kind;
  mapped.notes = batch.value();
  for (const std::string& note : config_file_notes(file.value())) mapped.notes.push_back(note);
  mapped.ignored = file->ignored;
  mapped.not_modelled = file->not_modelled;
  mapped.left_unset = file->left_unset;
  mapped.unrecognised = file->unrecognised;
  return mapped;
}

// POST /v1/config {"name": "ds_zero3.json", "text": "...", "request": {...}}: the request
// (the page's form, optional) with the file mapped over it, and what the file left out.
HttpReply config_reply(const HttpRequest& req) {
  if (!req.content_type.empty() && !is_json_media_type(req.content_type)) return not_json(req);
  // The request object is dumped below, and dump() recurses: refuse deep texts unparsed.
  const std::string raw(req.body);
  const bool readable = json_nesting_depth(raw) <= kMaxJsonNesting && json_member_count(raw) <= kMaxJsonMembers;
  if (!readable) {
    return error_reply(make_error(ErrorCode::kMalformed, "config",
                                  "the body is not read; accepted: JSON nested at most " + std::to_string(kMaxJsonNesting) +
                                      " levels, with at most " + std::to_string(kMaxJsonMembers) + " members"));
  }
  const ordered_json body = ordered_json::parse(raw, nullptr, false);
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string() || !body.contains("text") ||
      !body["text"].is_string() || (body.contains("request") && !body["request"].is_object())) {
    return error_reply(make_error(ErrorCode::kMalformed, "config",
                                  "the body is not valid; accepted: a JSON object {\"name\": FILE NAME, \"text\": "
                                  "FILE TEXT, \"request\": optional request object}"));
  }
  const std::string name = body["name"].get<std::string>();
  const std::string text = body["text"].get<std::string>();
  if (text.size() > kMaxConfigFileBytes) {
    return error_reply(make_error(ErrorCode::kInvalidValue, "config",
                                  "config='" + name + "' is over the limit; accepted: at most " +
                                      std::to_string(kMaxConfigFileBytes) + " bytes"));
  }
  Request request;
  if (body.contains("request")) {
    Result<Request> parsed = request_from_json(body["request"].dump());
    if (!parsed) return error_reply(parsed.error());
    request = parsed.value();
  }
  Result<Mapped> mapped = is_hf_config(name, text) ? map_hf_config(name, text, request)
                                                   : map_framework_config(name, text, request);
  if (!mapped) return error_reply(mapped.error());
  ordered_json out;
  out["name"] = name;
  out["kind"] = mapped->kind;
  out["request"] = ordered_json::parse(request_to_json(request));
  out["notes"] = mapped->notes;
  out["ignored"] = mapped->ignored;
  out["not_modelled"] = mapped->not_modelled;
  out["left_unset"] = mapped->left_unset;
  out["unrecognised"] = mapped->unrecognised;
  return make_reply(200, out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
}

}  // namespace

const char* page_route_label(std::string_view path) {
  if (path == kConfigPath) return kConfigPath;
  const PageAsset* asset = find_asset(path);
  return asset == nullptr ? nullptr : asset->path;
}

std::optional<HttpReply> page_reply(const HttpRequest& req) {
  if (req.path == kConfigPath) {
    if (req.method != "POST") return not_allowed(req, "POST", "POST");
    return config_reply(req);
  }
  const PageAsset* asset = find_asset(req.path);
  if (asset == nullptr) return std::nullopt;
  if (req.method != "GET" && req.method != "HEAD") return not_allowed(req, "GET, HEAD", "GET");
  return make_reply(200, std::string(asset->data, asset->size), asset->content_type);
}

}  // namespace trainfit::cli
