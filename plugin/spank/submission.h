// The files a submission names, read on the submit host (slurmctld cannot read them): the
// geometry of --llm-hf-config and the fields of --llm-config travel in the job's environment
// as TRAINFIT_GEOMETRY and TRAINFIT_CONFIG key=value lists. Each file is read once per process.
#pragma once

#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::spank {

// --llm-config's file as trainfit_config_reader.so reads it (config_reader.h): the request's
// fields as key=value pairs, and what the file left out.
struct ConfigFields {
  std::string fields;
  std::string notes;  // lines, each '\n'-terminated
};

// The geometry of --llm-hf-config (a regular file, bounded).
const Result<Request>& hf_geometry(const std::string& path);

// The fields of --llm-config (a framework's config file).
const Result<ConfigFields>& config_file(const std::string& path);

// What --llm-config left out, on the user's terminal.
void log_config_notes(const ConfigFields& file);

// The environment entries job_submit will see for the options given, and the files' fields.
Result<std::vector<std::string>> job_env();

}  // namespace trainfit::spank
