// What the four config readers share: setting request fields with errors that name
// the file's own key, and the lists of keys that are ignored, not modelled, left
// unset or not recognised.
#pragma once

#include <initializer_list>
#include <string>

#include "trainfit/config_file.h"

namespace trainfit::config_files {

class Mapping {
 public:
  Mapping(const std::string& kind, const std::string& source);

  // Sets one request field from the file's key; errors name the key, the value and
  // what the field accepts.
  Result<bool> set(const std::string& key, const char* field, const std::string& value);
  void ignore(const std::string& key) { file_.ignored.push_back(key); }
  void not_modelled(const std::string& key, const std::string& value) { file_.not_modelled.push_back(key + "=" + value); }
  void left_unset(const std::string& key, const std::string& value) { file_.left_unset.push_back(key + "=" + value); }
  void unrecognised(const std::string& key) { file_.unrecognised.push_back(key); }
  void inferred(const std::string& what) { file_.inferred.push_back(what); }

  // "<source>: key='value' is not valid; accepted: ..."
  Error invalid(const std::string& key, const std::string& value, const std::string& accepted) const;
  // "<source>: <message>" with the code given.
  Error error(ErrorCode code, const std::string& key, const std::string& message) const;

  ConfigFile& file() { return file_; }
  const Request& request() const { return file_.request; }
  ConfigFile take() { return std::move(file_); }

 private:
  std::string source_;
  ConfigFile file_;
};

// True when name is one of names.
bool one_of(const std::string& name, std::initializer_list<const char*> names);

}  // namespace trainfit::config_files
