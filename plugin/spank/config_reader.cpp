// trainfit_config_reader.so: --llm-config's reader, loaded by the SPANK plugin only when a
// submission names a config file (config_reader.h says why it is apart).
#include "config_reader.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "trainfit/config_file.h"
#include "trainfit/request.h"

namespace {

char* copy(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// What the file leaves out, as sbatch shows it.
std::string notes_of(const trainfit::ConfigFile& file) {
  trainfit::Request request = file.request;  // sbatch does not know the GPU count: the global batch is only noted
  trainfit::Result<std::vector<std::string>> batch = trainfit::apply_global_batch(file, request);
  std::vector<std::string> notes = batch ? batch.value() : std::vector<std::string>();
  for (const std::string& note : trainfit::config_file_notes(file)) notes.push_back(note);
  std::string out;
  for (const std::string& note : notes) out += "trainfit: --llm-config (" + file.kind + "): " + note + "\n";
  return out;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int trainfit_read_config(const char* text, size_t size,
                                                                           const char* name, char** fields,
                                                                           char** notes, char** message) {
  *fields = *notes = *message = nullptr;
  try {
    trainfit::Result<trainfit::ConfigFile> file = trainfit::read_config_file_text(std::string(text, size), name);
    if (!file) {
      *message = copy(file.error().message);
      return 1 + static_cast<int>(file.error().code);
    }
    *fields = copy(trainfit::to_key_values(file->request, ','));
    *notes = copy(notes_of(file.value()));
    if (*fields == nullptr || *notes == nullptr) {
      std::free(*fields), std::free(*notes);
      *fields = *notes = nullptr;
      return 1 + static_cast<int>(trainfit::ErrorCode::kUnavailable);
    }
    return 0;
  } catch (...) {  // out of memory: nothing crosses into sbatch
    return 1 + static_cast<int>(trainfit::ErrorCode::kUnavailable);
  }
}
