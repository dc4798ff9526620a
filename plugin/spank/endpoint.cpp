#include "endpoint.h"

#include <fstream>

extern "C" {
#include <slurm/spank.h>
}

#include "say.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/json.h"

namespace trainfit::spank {
namespace {

// The probe sets num_gpus to the layout's product: errors about it are slurmctld's to judge.
Result<bool> unless_about_num_gpus(const Error& error) {
  if (error.field == "num_gpus") return true;
  return make_error(error.code, error.field, "invalid annotation: " + error.message);
}

}  // namespace

bool take_endpoint_arg(const std::string& key, const std::string& value, EndpointArgs* args) {
  std::optional<std::string>* slot = key == "endpoint"                      ? &args->endpoint
                                     : key == "endpoint_connect_timeout_ms" ? &args->connect_timeout_ms
                                     : key == "endpoint_timeout_ms"         ? &args->timeout_ms
                                     : key == "cacert"                      ? &args->cacert
                                     : key == "endpoint_fallback"           ? &args->fallback
                                                                            : nullptr;
  if (slot == nullptr) return false;
  *slot = value;
  return true;
}
Result<std::optional<remote::Settings>> endpoint_settings(const EndpointArgs& args) {
  return remote::parse_settings(args, {"endpoint_connect_timeout_ms", "endpoint_timeout_ms", "endpoint_fallback",
                                       "endpoint is missing; endpoint_* and cacert need endpoint=URL[,URL...]"});
}

Result<bool> check_probe_locally(const Request& probe) {
  Result<Resolved> resolved = resolve(probe);
  return resolved ? Result<bool>(true) : unless_about_num_gpus(resolved.error());
}

Result<bool> check_probe(const remote::Settings& settings, const Request& probe, bool report) {
  std::string body;
  try {
    body = request_to_json(probe);
  } catch (const std::exception&) {
    return check_probe_locally(probe);  // text that is not UTF-8: resolve() names the field
  }
  const remote::Outcome outcome = remote::post_estimate(settings, body);
  if (outcome.answer) {
    if (report) say("trainfit: checked by " + outcome.answer->endpoint);
    if (outcome.answer->status == 400) return unless_about_num_gpus(remote::answer_error(*outcome.answer));
    return true;
  }
  const std::string down = "no endpoint answered: " + remote::describe(outcome.failures) + "; ";
  if (settings.fallback == remote::Fallback::kRefuse) {
    return make_error(ErrorCode::kInternal, "endpoint", down + "refused (endpoint_fallback=refuse)");
  }
  say("trainfit: " + down + "computed locally");
  return check_probe_locally(probe);
}

Result<Response> ServiceEstimator::predict(const Request& request, double headroom, bool with_min_gpus) const {
  const GpuSpec* gpu = request.gpu ? gpu_in_catalog(*request.gpu) : nullptr;
  std::string body;
  try {
    if (gpu == nullptr) throw std::invalid_argument("no catalog GPU");  // decide() always names one
    Request asked = request;
    asked.gpu_memory_gb = gpu->capacity_bytes * (1.0 - headroom) / kGiB;  // exact: kGiB is 2^30
    body = request_to_json(asked);
  } catch (const std::exception&) {  // text that is not UTF-8: resolve() names the field
    computed_locally_ = true;
    return admission::local_estimator().predict(request, headroom, with_min_gpus);
  }
  const remote::Outcome outcome = remote::post_estimate(settings_, body);
  if (outcome.answer) {
    if (report_) say("trainfit: step checked by " + outcome.answer->endpoint);
    if (outcome.answer->status == 400) return remote::answer_error(*outcome.answer);
    return response_from_json(outcome.answer->body);
  }
  const std::string down = "trainfit: no endpoint answered: " + remote::describe(outcome.failures);
  if (settings_.fallback == remote::Fallback::kRefuse) {
    refusal_ = down + " (endpoint_fallback=refuse)";
    return make_error(ErrorCode::kInternal, "endpoint", *refusal_);
  }
  say(down + "; computed locally");
  computed_locally_ = true;
  return admission::local_estimator().predict(request, headroom, with_min_gpus);
}

// From the service's advice, by the local estimator's rule; a response computed here
// after no endpoint answered carries no advice: the local estimator finds it.
std::optional<Advice> ServiceEstimator::cheapest_change(const Response& response) const {
  if (computed_locally_) return admission::local_estimator().cheapest_change(response);
  return one_line_advice(response.advice, response.resolved.config.num_gpus, response.min_gpus.gpus);
}

}  // namespace trainfit::spank
