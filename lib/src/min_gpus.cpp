// min_gpus_to_fit: the smallest valid GPU count at which the step fits.
// Valid: a multiple of tp*pp*cp (and of tp*pp*ep with experts); beyond one
// node, whole nodes when gpus_per_node is given.
#include <numeric>

#include "text.h"
#include "trainfit/estimate.h"

namespace trainfit {
namespace {

constexpr int64_t kMaxGpus = int64_t{1} << 20;

int64_t gpu_unit(const Config& c) {
  return std::lcm(c.tp * c.pp * c.cp, c.tp * c.pp * c.ep);
}

bool fits_at(Config c, int64_t gpus) {
  c.num_gpus = gpus;
  return estimate(c).fits;
}

// First index in [lo, hi] where fits(step * index) holds; per-GPU memory only
// falls as the sharding group grows, so the predicate is monotone there.
int64_t first_fitting(const Config& c, int64_t step, int64_t lo, int64_t hi) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fits_at(c, step * mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}

}  // namespace

MinGpus min_gpus_to_fit(const Config& c) {
  MinGpus out;
  const int64_t unit = gpu_unit(c);
  const int64_t node = c.gpus_per_node;
  const int64_t big_step = node > 0 ? std::lcm(unit, node) : unit;
  const int64_t max_index = kMaxGpus / big_step;
  if (max_index < 1) {
    out.reason = "tensor*pipeline*context parallel (" + std::to_string(unit) + ") exceeds the largest supported job";
    return out;
  }
  Config widest = c;
  widest.num_gpus = max_index * big_step;
  const Breakdown floor = estimate(widest);
  if (!floor.fits) {
    const double unshardable = floor.stage.activations.total() + floor.overheads.total();
    out.reason = unshardable > floor.capacity
                     ? "activations and runtime overheads alone need " + format_gib(unshardable) +
                           " GiB per GPU, more than the " + format_gib(floor.capacity) +
                           " GiB available at any GPU count; recompute, a smaller micro-batch, TP or CP are needed"
                     : "even at " + std::to_string(widest.num_gpus) + " GPUs the step needs " +
                           format_gib(floor.per_gpu_total) + " GiB per GPU (" + format_gib(floor.capacity) +
                           " GiB available)";
    return out;
  }
  // Small counts one by one: communicator sizes (2 ranks vs more) make memory
  // non-monotone there. Within one node any multiple of the unit is allowed.
  const int64_t small_limit = node > 0 ? node : 8 * unit;
  for (int64_t gpus = unit; gpus <= small_limit && gpus <= kMaxGpus; gpus += unit) {
    if (fits_at(c, gpus)) {
      out.gpus = gpus;
      return out;
    }
  }
  const int64_t lo = small_limit / big_step + 1;
  out.gpus = big_step * first_fitting(c, big_step, lo, max_index);
  return out;
}

}  // namespace trainfit
