// Model and GPU catalogs. The source of truth is conf/models.json and
// conf/gpus.json; the build compiles them in, so lookups do no I/O.
#pragma once

#include <string>
#include <vector>

#include "trainfit/config.h"
#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit {

struct ModelPreset {
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::string> hf_ids;  // Hugging Face Hub ids (ORG/NAME) whose config.json is this geometry
  std::string description;
  std::string source;
  Geometry geometry;
  double expected_params = 0;  // published/derived exact count, 0 if none
};

struct GpuSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;
  double capacity_bytes = 0;   // what a framework can allocate into
  std::string source;          // where that number comes from
  GpuArchitecture architecture = GpuArchitecture::kOther;  // "architecture": hopper, ampere, ...
  // Product names as the driver reports them (NVML nvmlDeviceGetName, i.e.
  // nvidia-smi --query-gpu=name; ROCm SMI / amdsmi for AMD), e.g. "NVIDIA H100 80GB HBM3".
  std::vector<std::string> device_names;
  std::string device_names_source;  // where each device name was seen
};

// The catalogs in use: the built-in ones, or the last set install_catalogs() made current.
// A catalog is immutable once installed and freed only by free_replaced_catalogs() (below)
// while no CatalogUse is alive, so the references and pointers these functions and the
// lookups below return stay valid across a reload for as long as their reader counts itself in.
TRAINFIT_API const std::vector<ModelPreset>& model_catalog();
TRAINFIT_API const std::vector<GpuSpec>& gpu_catalog();

// ---- Site catalogs (docs/site.md) ----
// Site files (gpus.d/*.json, models.d/*.json) have the format of conf/gpus.json and
// conf/models.json. Merging is pure (no I/O): the admission library reads the files
// (trainfit/admission/catalog_dir.h).
struct CatalogText {
  std::string path;  // as messages name it
  std::string text;
};
struct CatalogSet {
  std::vector<ModelPreset> models;
  std::vector<GpuSpec> gpus;
  std::vector<std::string> notes;     // "FILE:LINE: gpu 'a40' added (...)", "... overrides ..."
  // Every mistake found, each located: message "FILE:LINE: reason" (or "FOLDER: reason"),
  // line (0: the file or folder as a whole), field (the catalog field at fault, or "").
  std::vector<Error> problems;
};
// The built-in catalogs with the files merged on top, in the order given: an entry whose
// name is already in the catalog (built-in or an earlier file) replaces that entry whole;
// other entries are added. Each entry is validated; problems name file, line, field, value
// and what is accepted.
TRAINFIT_API CatalogSet merge_catalogs(const std::vector<CatalogText>& gpu_files,
                                       const std::vector<CatalogText>& model_files);
// Makes the set's catalogs the ones every lookup uses, in one atomic step. Refused (false,
// nothing changes) when the set has problems or an empty catalog.
TRAINFIT_API bool install_catalogs(const CatalogSet& set);
// Back to the built-in catalogs (tests).
TRAINFIT_API void install_builtin_catalogs();

// For a process that reloads its catalogs while other threads look things up (the job_submit
// plugin): each thread that looks up holds a CatalogUse for as long as it uses entries, and
// the reloading thread calls free_replaced_catalogs() after it installs: the replaced
// catalogs are freed when no CatalogUse is alive at that moment (else kept for a later call).
// Returns how many catalogs are kept, the one in use included (0: the built-in one is in use).
// A process that never calls it keeps every catalog it installed (the service, the CLI).
class TRAINFIT_API CatalogUse {
 public:
  CatalogUse();
  ~CatalogUse();
  CatalogUse(const CatalogUse&) = delete;
  CatalogUse& operator=(const CatalogUse&) = delete;
};
TRAINFIT_API size_t free_replaced_catalogs();

// Case-insensitive, by name or alias; unknown names get "did you mean".
TRAINFIT_API Result<const ModelPreset*> find_model(const std::string& name);
// Also by device name (raw, or as Slurm's AutoDetect GRES type, see below); '-' and '_'
// are interchangeable. Nothing fuzzier: a site's own GRES type names are mapped with
// gpu_alias in trainfit.conf.
TRAINFIT_API Result<const GpuSpec*> find_gpu(const std::string& name);
// The same lookup without the error: nullptr for an unknown name (no "did you mean",
// whose edit distances cost microseconds on every response naming a custom GPU).
TRAINFIT_API const GpuSpec* gpu_in_catalog(const std::string& name);

// The GRES type slurmd's AutoDetect (gpu/nvml, gpu/rsmi) derives from a device name:
// Slurm's gpu_common_underscorify_tolower, i.e. every character lower-cased (ASCII) and
// every space turned into '_'. "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3".
TRAINFIT_API std::string slurm_gres_type_name(const std::string& device_name);

// Every spelling find_gpu accepts for this entry, as written: name, aliases, device
// names, and each device name's Slurm GRES type (exact duplicates removed). Lookups
// also ignore case and the '-'/'_' difference.
TRAINFIT_API std::vector<std::string> gpu_spellings(const GpuSpec& gpu);

// Reads a Hugging Face config.json (text) into a geometry.
TRAINFIT_API Result<Geometry> geometry_from_hf_config(const std::string& json_text);
// The name an HF config's model is shown by: the directory (path .../NAME/config.json) or file
// (NAME.config.json, NAME.json) the user gave, else its "_name_or_path", else
// "<model_type> (hf config)". path may be "" or "-" (standard input).
TRAINFIT_API std::string hf_config_label(const std::string& json_text, const std::string& path);

// Closest candidate by edit distance, "" when nothing is close.
TRAINFIT_API std::string did_you_mean(const std::string& word,
                                      const std::vector<std::string>& candidates);

}  // namespace trainfit
