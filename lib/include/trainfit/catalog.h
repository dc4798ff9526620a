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
};

TRAINFIT_API const std::vector<ModelPreset>& model_catalog();
TRAINFIT_API const std::vector<GpuSpec>& gpu_catalog();

// Case-insensitive, by name or alias; unknown names get "did you mean".
TRAINFIT_API Result<const ModelPreset*> find_model(const std::string& name);
TRAINFIT_API Result<const GpuSpec*> find_gpu(const std::string& name);

// Reads a Hugging Face config.json (text) into a geometry.
TRAINFIT_API Result<Geometry> geometry_from_hf_config(const std::string& json_text);

// Closest candidate by edit distance, "" when nothing is close.
TRAINFIT_API std::string did_you_mean(const std::string& word,
                                      const std::vector<std::string>& candidates);

}  // namespace trainfit
