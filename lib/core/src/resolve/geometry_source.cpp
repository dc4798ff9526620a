// One source for the whole geometry: a catalog model or a Hugging Face config.json, not both.
#include "trainfit/request.h"
#include "trainfit/util/text.h"

namespace trainfit {

Result<bool> check_one_geometry_source(const Request& request, const std::string& hf_config_path,
                                       const GeometrySourceKeys& keys) {
  if (hf_config_path.empty() || !request.model) return true;
  return make_error(ErrorCode::kInconsistent, "model",
                    keys.model + "='" + quoted_excerpt(*request.model) + "' and " + keys.hf_config + "='" +
                        quoted_path(hf_config_path) + "' both give the model's geometry; accepted: one or the other (" +
                        keys.model + " for a catalog model, " + keys.hf_config + " for any other)");
}

}  // namespace trainfit
