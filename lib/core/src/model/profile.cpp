// The seed's two profiles: per-GPU memory against GPU count (log scale) and
// against sequence length, 48 points each.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model.h"
#include "trainfit/estimate.h"

namespace trainfit {
namespace {

// `points` strictly increasing multiples of `step` from lo to hi, log-spaced.
std::vector<int64_t> log_steps(int64_t lo, int64_t hi, int64_t step, int points) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(points));
  const double ratio = std::log(static_cast<double>(hi) / static_cast<double>(lo)) / std::max(1, points - 1);
  for (int i = 0; i < points; ++i) {
    const double value = static_cast<double>(lo) * std::exp(ratio * i);
    int64_t n = std::max<int64_t>(step, static_cast<int64_t>(std::llround(value / static_cast<double>(step))) * step);
    if (!out.empty() && n <= out.back()) n = out.back() + step;
    out.push_back(n);
  }
  return out;
}

}  // namespace

std::vector<GpuPoint> sweep_gpus(const Config& c, int points) {
  const int64_t unit = std::lcm(c.tp * c.pp * c.cp, c.tp * c.pp * c.ep);
  const int64_t hi = std::max<int64_t>({1024, 8 * c.num_gpus, unit * points});
  std::vector<GpuPoint> out;
  out.reserve(static_cast<size_t>(points));
  const model::SharedParts parts = model::shared_parts(c, true);  // only num_gpus varies
  Config x = c;
  // Only counts min_gpus_to_fit could answer (whole nodes beyond one), so that a sweep never
  // shows as fitting a count the rule does not allow (22 GPUs where the answer is 24).
  int64_t last = 0;
  for (int64_t step : log_steps(unit, hi, unit, points)) {
    const int64_t gpus = valid_gpu_count_from(c, std::max(step, last + 1));
    last = gpus;
    x.num_gpus = gpus;
    const Breakdown b = model::estimate_with(x, parts);
    out.push_back({gpus, b.per_gpu_total / kGiB, b.stage.states.total() / kGiB, b.stage.activations.total() / kGiB,
                   b.fits, b.likely_low / kGiB, b.likely_high / kGiB});
  }
  return out;
}

std::vector<SeqPoint> sweep_seq(const Config& c, int points) {
  const int64_t quantum = c.cp * (c.sp ? c.tp : 1);
  const int64_t step = std::lcm<int64_t>(64, quantum);
  const int64_t lo = std::max<int64_t>(256, step);
  const int64_t hi = std::max<int64_t>({131072, 4 * c.seq_length, lo * points});
  std::vector<SeqPoint> out;
  out.reserve(static_cast<size_t>(points));
  const model::SharedParts parts = model::shared_parts(c, false);  // activations change with seq
  Config x = c;
  // The job's own length is one of the points: the nearest log step gives way to it.
  std::vector<int64_t> lengths = log_steps(lo, hi, step, points);
  const auto nearest = std::min_element(lengths.begin(), lengths.end(), [&c](int64_t a, int64_t b) {
    return std::llabs(a - c.seq_length) < std::llabs(b - c.seq_length);
  });
  const bool room = (nearest == lengths.begin() || *(nearest - 1) < c.seq_length) &&
                    (nearest + 1 == lengths.end() || *(nearest + 1) > c.seq_length);
  if (room) *nearest = c.seq_length;
  for (int64_t seq : lengths) {
    x.seq_length = seq;
    const Breakdown b = model::estimate_with(x, parts);
    out.push_back({seq, b.per_gpu_total / kGiB, b.stage.activations.total() / kGiB, b.fits, b.likely_low / kGiB,
                   b.likely_high / kGiB});
  }
  return out;
}

}  // namespace trainfit
