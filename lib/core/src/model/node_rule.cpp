// How min_gpus_to_fit counts GPUs, in words every face prints beside the number (the
// CLI's table, the service's JSON, the job_submit plugin's messages), so that one rule is
// stated wherever an answer is given. The counts themselves: min_gpus.cpp's ValidCounts.
#include <algorithm>
#include <numeric>

#include "trainfit/estimate.h"

namespace trainfit {
namespace {

std::string plural(int64_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

int64_t model_unit(const Config& c) { return std::lcm(c.tp * c.pp * c.cp, c.tp * c.pp * c.ep); }

}  // namespace

std::string min_gpus_text(const Config& c, int64_t gpus) {
  // The bound the count was found for, named where it is not the point figure (fit_bound).
  const std::string bound = c.fit_bound == FitBound::kLikelyHigh  ? " for the likely high end"
                            : c.fit_bound == FitBound::kLikelyLow ? " for the likely low end"
                                                                  : "";
  if (gpus <= 0) return "none" + bound;
  if (c.gpus_per_node <= 0 || gpus <= c.gpus_per_node) return std::to_string(gpus) + bound;
  const int64_t nodes = (gpus + c.gpus_per_node - 1) / c.gpus_per_node;
  return std::to_string(gpus) + " (" + plural(nodes, "node", "nodes") + " of " + std::to_string(c.gpus_per_node) + ")" + bound;
}

int64_t valid_gpu_count_from(const Config& c, int64_t gpus) {
  const int64_t unit = model_unit(c);
  const int64_t in_node = (std::max<int64_t>(gpus, 1) + unit - 1) / unit * unit;
  if (c.gpus_per_node <= 0 || in_node <= c.gpus_per_node) return in_node;
  const int64_t node_step = std::lcm(unit, c.gpus_per_node);  // whole nodes holding whole units
  return (gpus + node_step - 1) / node_step * node_step;
}

std::string min_gpus_rule(const Config& c) {
  const int64_t unit = model_unit(c);
  const std::string step = unit == 1 ? "any GPU count" : "multiples of " + std::to_string(unit) + " GPUs";
  if (c.gpus_per_node <= 0) return step;
  if (unit > c.gpus_per_node) {
    return step + " (tensor x pipeline x context parallel), in whole " + std::to_string(c.gpus_per_node) +
           "-GPU nodes (gpus_per_node=" + std::to_string(c.gpus_per_node) + (c.gpus_per_node_assumed ? ", the default" : "") + ")";
  }
  return step + " up to one " + std::to_string(c.gpus_per_node) + "-GPU node, whole nodes beyond (gpus_per_node=" +
         std::to_string(c.gpus_per_node) + (c.gpus_per_node_assumed ? ", the default" : "") + ")";
}

}  // namespace trainfit
