// The SPANK plugin's state in one process (sbatch, salloc, srun or slurmstepd): what
// plugstack.conf said, the --llm-* options given, and what was read for them. Made by the
// first hook that needs it, freed by slurm_spank_exit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "endpoint.h"
#include "submission.h"
#include "trainfit/error.h"
#include "trainfit/remote/client.h"
#include "trainfit/request.h"

namespace trainfit::spank {

// plugstack.conf's words after the plugin's path (plugstack_args.h).
struct Settings {
  std::string default_gpu = "h100";        // as written: checked with the catalogs (site_catalogs.h)
  std::string catalog_dir;                 // catalog_dir= as written ("" = the default)
  std::string conf;                        // site trainfit.conf: the policy srun steps are held to
  EndpointArgs endpoint;                   // endpoint=, endpoint_*=, cacert= as written
  std::optional<remote::Settings> client;  // set when endpoint= is given (sbatch/salloc/srun)
};

// An --llm-* option as given: its row in the option table (options.h) and its value.
struct GivenOption {
  size_t row;
  std::string value;
};

// A file of the submission and what reading it gave (submission.h reads each once).
template <typename T>
struct FileRead {
  std::string path;
  Result<T> result;
};

struct State {
  Settings settings;
  std::vector<GivenOption> given;                  // in the order first given
  std::optional<Result<std::string>> default_gpu;  // the catalogs' name for it, once read
  std::optional<FileRead<Request>> hf_config;      // --llm-hf-config's geometry
  std::optional<FileRead<ConfigFields>> config;    // --llm-config's fields
};

State& state();
void free_state() noexcept;

}  // namespace trainfit::spank
