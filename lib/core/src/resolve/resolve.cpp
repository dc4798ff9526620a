// Request -> Config: the framework's words and defaults first, then geometry,
// training and layout, each a step of its own (steps.h). Every rejected value
// gets one line naming the field, the value and what is accepted.
#include "steps.h"

namespace trainfit {

Result<Resolved> resolve(const Request& request) {
  Resolved out;
  out.assumptions.reserve(8);  // a request's defaults, each noted: one allocation, not one per growth
  // Most requests (every admission decision without a framework) are already in
  // trainfit's words: no copy for them.
  std::optional<Result<Request>> words;
  if (resolving::speaks_a_framework(request)) {
    words = resolving::apply_framework(request, &out.config.framework, &out.config.precision_label, &out.assumptions,
                                       &out.config.defaults_vary_with_gpus);
    if (!*words) return (*words).error();
  }
  const Request& r = words ? (*words).value() : request;
  for (auto step : {resolving::resolve_geometry, resolving::resolve_training, resolving::resolve_layout}) {
    Result<bool> done = step(r, &out.config, &out.assumptions);
    if (!done) return done.error();
  }
  return out;
}

}  // namespace trainfit
