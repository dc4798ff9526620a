// The SPANK plugin's endpoint= settings: sbatch/salloc ask `trainfit serve` to check the
// annotation instead of resolving it here. Never used by job_submit (slurmctld).
#pragma once

#include <optional>
#include <string>

#include "trainfit/remote/client.h"
#include "trainfit/admission.h"
#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::spank {

using EndpointArgs = remote::SettingsWords;  // the plugstack.conf words, as written

// Whether KEY=VALUE is one of the endpoint words (stored in args).
bool take_endpoint_arg(const std::string& key, const std::string& value, EndpointArgs* args);

// The client settings; nullopt without endpoint=. Errors name the word and the value.
Result<std::optional<remote::Settings>> endpoint_settings(const EndpointArgs& args);

// The annotation's probe checked as resolve() would: through the endpoints, else (all
// down) locally or refused per endpoint_fallback. Errors are the user's one line.
// report: say on the terminal which endpoint answered (--llm-check).
Result<bool> check_probe(const remote::Settings& settings, const Request& probe, bool report);

// The same check, here.
Result<bool> check_probe_locally(const Request& probe);

// srun steps: the numbers from the service (sent the capacity left after the partition's
// headroom, which it does not know), the site's policy applied here by admission::decide.
class ServiceEstimator : public admission::Estimator {
 public:
  // report: say on the terminal which endpoint answered (--llm-check).
  ServiceEstimator(const remote::Settings& settings, bool report) : settings_(settings), report_(report) {}
  Result<Response> predict(const Request& request, double headroom, bool with_min_gpus) const override;
  std::optional<Advice> cheapest_change(const Response& response) const override;
  // Why the step is refused: no endpoint answered under endpoint_fallback=refuse.
  const std::optional<std::string>& refusal() const { return refusal_; }

 private:
  const remote::Settings& settings_;
  const bool report_;
  mutable std::optional<std::string> refusal_;
  mutable bool computed_locally_ = false;  // a prediction fell back: its response has no advice
};

}  // namespace trainfit::spank
