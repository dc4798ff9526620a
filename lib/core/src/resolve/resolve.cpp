// Request -> Config: the framework's words and defaults first, then geometry,
// training and layout, each a step of its own (steps.h). Every rejected value
// gets one line naming the field, the value and what is accepted.
//
// The common path keeps its stack small: slurmctld runs job_submit on a new thread per RPC,
// whose stack pages each cost a page fault when first touched (glibc returns a finished
// thread's stack pages with madvise), so a request copy lives only on the framework path.
#include "steps.h"

namespace trainfit {
namespace {

Result<bool> resolve_steps(const Request& r, Resolved* out) {
  for (auto step : {resolving::resolve_geometry, resolving::resolve_training, resolving::resolve_layout}) {
    Result<bool> done = step(r, &out->config, &out->assumptions);
    if (!done) return done;
  }
  return true;
}

// A request in a framework's words, translated into trainfit's first (a copy of the request).
[[gnu::noinline]] Result<bool> resolve_framework_words(const Request& request, Resolved* out) {
  Result<Request> words = resolving::apply_framework(request, &out->config.framework, &out->config.precision_label,
                                                     &out->assumptions, &out->config.defaults_vary_with_gpus);
  if (!words) return words.error();
  return resolve_steps(words.value(), out);
}

}  // namespace

Result<bool> resolve_into(const Request& request, Resolved* out) {
  out->assumptions.reserve(8);  // a request's defaults, each noted: one allocation, not one per growth
  // Most requests (every admission decision without a framework) are already in
  // trainfit's words: no copy for them.
  if (resolving::speaks_a_framework(request)) return resolve_framework_words(request, out);
  return resolve_steps(request, out);
}

Result<Resolved> resolve(const Request& request) {
  Resolved out;
  Result<bool> done = resolve_into(request, &out);
  if (!done) return done.error();
  return out;
}

}  // namespace trainfit
