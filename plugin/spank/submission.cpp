#include "submission.h"

#include <cstdlib>
#include <optional>

#include "options.h"
#include "reader_module.h"
#include "say.h"
#include "state.h"
#include "trainfit/admission.h"
#include "trainfit/admission/spank_env.h"
#include "trainfit/config_file.h"  // kMaxConfigFileBytes; the reading is trainfit_config_reader.so's
#include "trainfit/util/file.h"

namespace trainfit::spank {
namespace {

// The result for PATH, read at the first call (sbatch looks at --llm-config twice).
template <typename T, typename Read>
const Result<T>& read_once(std::optional<FileRead<T>>& cache, const std::string& path, Read read) {
  if (!cache || cache->path != path) cache.emplace(FileRead<T>{path, read(path)});
  return cache->result;
}

Result<Request> read_hf_geometry(const std::string& path) {
  Result<std::string> text = read_regular_file(path, admission::kMaxHfConfigBytes);
  if (!text) return make_error(text.error().code, "hf-config", "--llm-hf-config=" + text.error().message);
  Result<Geometry> geometry = geometry_from_hf_config(text.value());
  if (!geometry) {
    return make_error(geometry.error().code, "hf-config", "--llm-hf-config='" + path + "': " + geometry.error().message);
  }
  Request request;
  set_geometry(request, geometry.value());
  return request;
}

// The reader's return code: 1 + the ErrorCode (config_reader.h).
ErrorCode reader_error_code(int rc) {
  const int code = rc - 1;
  return code >= 0 && code <= static_cast<int>(ErrorCode::kInternal) ? static_cast<ErrorCode>(code) : ErrorCode::kInternal;
}

Result<ConfigFields> read_config_file(const std::string& path) {
  Result<std::string> text = read_regular_file(path, kMaxConfigFileBytes);
  if (!text) return make_error(text.error().code, "config", "--llm-config=" + text.error().message);
  Result<ConfigReader> reader = config_reader();
  if (!reader) {
    return make_error(ErrorCode::kInternal, "config",
                      "--llm-config: the config file reader is not installed (" + reader.error().message + ")");
  }
  char *fields = nullptr, *notes = nullptr, *message = nullptr;
  const int rc = reader->read(text->data(), text->size(), path.c_str(), &fields, &notes, &message);
  ConfigFields out{fields != nullptr ? fields : "", notes != nullptr ? notes : ""};
  const std::string said = message != nullptr ? message : "out of memory";
  std::free(fields), std::free(notes), std::free(message);
  if (rc != 0) return make_error(reader_error_code(rc), "config", "--llm-config: " + said);
  return out;
}

}  // namespace

const Result<Request>& hf_geometry(const std::string& path) {
  return read_once(state().hf_config, path, read_hf_geometry);
}

const Result<ConfigFields>& config_file(const std::string& path) {
  return read_once(state().config, path, read_config_file);
}

void log_config_notes(const ConfigFields& file) {
  size_t start = 0;
  for (size_t end; (end = file.notes.find('\n', start)) != std::string::npos; start = end + 1) {
    say(file.notes.substr(start, end - start));
  }
}

Result<std::vector<std::string>> job_env() {
  std::vector<std::string> env;
  if (const std::string* path = given_value(OptionRole::kHfConfig)) {
    const Result<Request>& geometry = hf_geometry(*path);
    if (!geometry) return geometry.error();
    env.push_back(std::string(admission::kGeometryVariable) + "=" + to_key_values(geometry.value(), ','));
  }
  if (const std::string* path = given_value(OptionRole::kConfig)) {
    const Result<ConfigFields>& file = config_file(*path);
    if (!file) return file.error();
    env.push_back(std::string(admission::kConfigVariable) + "=" + file->fields);
  }
  for (const GivenOption& given : state().given) {
    env.push_back(admission::spank_env_name(option_table()[given.row].spec->option) + "=" + given.value);
  }
  return env;
}

}  // namespace trainfit::spank
