#include "mapping.h"

#include <cstring>

namespace trainfit::config_files {

Mapping::Mapping(const std::string& kind, const std::string& source) : source_(source) {
  file_.kind = kind;
  file_.request.framework = kind;
}

Result<bool> Mapping::set(const std::string& key, const char* field, const std::string& value) {
  Result<bool> ok = set_field_from_text(file_.request, field, value);
  if (ok) return true;
  const FieldSpec* spec = find_field(field);
  return invalid(key, value, spec != nullptr ? spec->accepted : "see 'trainfit fields'");
}

Error Mapping::invalid(const std::string& key, const std::string& value, const std::string& accepted) const {
  return make_error(ErrorCode::kInvalidValue, key,
                    source_ + ": " + key + "='" + value + "' is not valid; accepted: " + accepted);
}

Error Mapping::error(ErrorCode code, const std::string& key, const std::string& message) const {
  return make_error(code, key, source_ + ": " + message);
}

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* candidate : names) {
    if (name == candidate) return true;
  }
  return false;
}

}  // namespace trainfit::config_files
