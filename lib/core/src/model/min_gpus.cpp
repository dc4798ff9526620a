// min_gpus_to_fit: the smallest valid GPU count at which the step fits.
// Valid: a multiple of tp*pp*cp (and of tp*pp*ep with experts); beyond one
// node, whole nodes when gpus_per_node is given.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model.h"
#include "trainfit/util/text.h"
#include "trainfit/estimate.h"

namespace trainfit {
namespace {

constexpr int64_t kMaxGpus = int64_t{1} << 20;

// The valid GPU counts in increasing order, addressed by index 1, 2, 3, ...
class ValidCounts {
 public:
  ValidCounts(const Config& c, int64_t at_most)
      : unit_(std::lcm(c.tp * c.pp * c.cp, c.tp * c.pp * c.ep)), node_(c.gpus_per_node) {
    if (node_ > 0) {
      in_node_ = std::min(node_, at_most) / unit_;  // unit, 2 unit, ... up to one node
      node_step_ = std::lcm(unit_, node_);          // then whole nodes that hold whole units
      first_node_multiple_ = node_ / unit_ * unit_ / node_step_ + 1;
      size_ = in_node_ + std::max<int64_t>(0, at_most / node_step_ - first_node_multiple_ + 1);
    } else {
      size_ = at_most / unit_;
    }
  }
  int64_t size() const { return size_; }
  int64_t at(int64_t index) const {
    if (node_ == 0 || index <= in_node_) return index * unit_;
    return (first_node_multiple_ + index - in_node_ - 1) * node_step_;
  }
  // The first index whose count is at least `gpus` (size() + 1 when none is).
  int64_t first_at_least(int64_t gpus) const {
    if (gpus <= unit_) return 1;
    if (node_ == 0 || gpus <= in_node_ * unit_) return std::min(size_ + 1, (gpus + unit_ - 1) / unit_);
    const int64_t multiple = (gpus + node_step_ - 1) / node_step_;
    return std::min(size_ + 1, in_node_ + 1 + std::max<int64_t>(0, multiple - first_node_multiple_));
  }

 private:
  int64_t unit_, node_;
  int64_t in_node_ = 0, node_step_ = 0, first_node_multiple_ = 0, size_ = 0;
};

Breakdown at(Config c, const model::SharedParts& parts, int64_t gpus) {
  c.num_gpus = gpus;
  return model::estimate_with(c, parts);
}

// Where the answer probably is, from two breakdowns that do not fit and fit: past a few ranks
// per-GPU memory is close to a + b/N (what N shards plus what it does not, ZeRO paper
// arXiv:1910.02054 sec. 5), so two points give a and b and the N where a + b/N meets capacity.
int64_t likely_gpus(int64_t n_low, const Breakdown& low, int64_t n_high, const Breakdown& high) {
  const double shrink = 1.0 / static_cast<double>(n_low) - 1.0 / static_cast<double>(n_high);
  const double b = (low.judged - high.judged) / shrink;
  const double a = high.judged - b / static_cast<double>(n_high);
  const double room = high.capacity - a;
  if (!(b > 0) || !(room > 0)) return n_high;
  const double n = std::ceil(b / room);
  return n < static_cast<double>(n_high) ? std::max(n_low + 1, static_cast<int64_t>(n)) : n_high;
}

// Nothing is split over the GPUs: every rank holds the whole model states and more data
// parallelism only adds ranks that each need as much.
bool nothing_sharded(const Config& c) { return c.zero_stage == 0 && c.tp == 1 && c.pp == 1 && c.ep == 1; }

// Why no count fits, from the widest job's breakdown; *unsharded: because nothing is sharded.
std::string why_none(const Config& c, const Breakdown& widest, int64_t gpus, bool* unsharded) {
  // Judged on the likely high end, what does not shard is scaled as the whole figure is.
  const double scale = widest.per_gpu_total > 0 ? widest.judged / widest.per_gpu_total : 1.0;
  const double unshardable = (widest.stage.activations.total() + widest.overheads.total()) * scale;
  if (unshardable > widest.capacity) {
    return "activations and runtime overheads alone need " + format_gib(unshardable) + " GiB per GPU, more than the " +
           format_gib(widest.capacity) +
           " GiB available at any GPU count; recompute, a smaller micro-batch, TP or CP are needed";
  }
  const std::string needs = format_gib(widest.judged) + " GiB per GPU" + (c.fit_bound == FitBound::kPoint ? "" : std::string(" at its likely ") + (c.fit_bound == FitBound::kLikelyHigh ? "high" : "low") + " end") +
                            " (" + format_gib(widest.capacity) + " GiB available)";
  *unsharded = nothing_sharded(c);
  if (*unsharded) {
    return "nothing is sharded (zero_stage=0, tensor_parallel=pipeline_parallel=1), so adding GPUs does not reduce "
           "per-GPU memory: the step needs " + needs + " at any GPU count; shard it: zero_stage=3 (or "
           "sharding=fsdp-full), tensor_parallel or pipeline_parallel";
  }
  return "even at " + std::to_string(gpus) + " GPUs the step needs " + needs;
}

}  // namespace

MinGpus min_gpus_to_fit(const Config& c, int64_t at_most) { return model::search_min_gpus(c, at_most, true); }

MinGpus min_gpus_for(const Request& request, const Config& c, const Breakdown& now) {
  if (!c.defaults_vary_with_gpus || now.fits) return min_gpus_to_fit(c, now);
  const Result<Config> multi = model::resolved_at(request, 2, c.capacity_bytes);
  if (!multi) {
    MinGpus none;
    none.reason = "the request is not valid on more than one GPU: " + multi.error().message;
    return none;
  }
  return model::search_min_gpus(*multi, 0, true, 2);  // one GPU is `c`, which does not fit
}

MinGpus min_gpus_to_fit(const Config& c, const Breakdown& now) {
  // A step that fits needs at most the GPUs it has: search below them first (the
  // common case at admission), the whole range only when no valid count there fits.
  if (now.fits) {
    const MinGpus below = model::search_min_gpus(c, c.num_gpus, false);
    if (below.gpus > 0) return below;
  }
  return min_gpus_to_fit(c);
}

namespace model {

Result<Config> resolved_at(const Request& request, int64_t gpus, double capacity_bytes) {
  Request at = request;
  at.num_gpus = gpus;
  Result<Resolved> resolved = resolve(at);
  if (!resolved) return resolved.error();
  Config c = std::move(resolved).value().config;
  c.capacity_bytes = capacity_bytes;
  return c;
}

MinGpus search_min_gpus(const Config& c, int64_t at_most, bool explain, int64_t at_least) {
  MinGpus out;
  const int64_t cap = c.max_gpus > 0 ? std::min(c.max_gpus, kMaxGpus) : kMaxGpus;
  const ValidCounts counts(c, at_most > 0 ? std::min(at_most, cap) : cap);
  const int64_t first = counts.first_at_least(at_least);
  if (counts.size() < first) {
    out.reason = "tensor*pipeline*context parallel exceeds the largest job answered (max_gpus=" + std::to_string(cap) + ")";
    return out;
  }
  // The widest job first: if even it does not fit, no count does (a refusal's common case).
  const SharedParts parts = shared_parts(c, true);  // only num_gpus varies below
  const int64_t last = counts.size(), few = std::min<int64_t>(first + 2, last);
  const Breakdown widest = at(c, parts, counts.at(last));
  if (!widest.fits) {
    if (explain) out.reason = why_none(c, widest, counts.at(last), &out.unsharded);
    return out;
  }
  // The first three counts one by one: the data-parallel communicator and DDP
  // buckets appear at two ranks and NCCL's buffers grow at three, so memory is
  // not monotone there.
  Breakdown at_few;
  for (int64_t i = first; i <= few; ++i) {
    at_few = at(c, parts, counts.at(i));
    if (at_few.fits) {
      out.gpus = counts.at(i);
      return out;
    }
  }
  // Beyond, per-GPU memory only falls as the sharding group grows: probe where a + b/N
  // says the answer is, gallop from there to bracket it, then bisect.
  int64_t below = few, above = last;  // below does not fit, above fits
  const int64_t guess = std::clamp(
      counts.first_at_least(likely_gpus(counts.at(few), at_few, counts.at(last), widest)), few + 1, last);
  const bool guess_fits = guess == last || at(c, parts, counts.at(guess)).fits;
  (guess_fits ? above : below) = guess;
  for (int64_t step = 1; above - below > 1; step *= 2) {
    const int64_t probe = guess_fits ? std::max(below + 1, above - step) : std::min(above - 1, below + step);
    const bool fits = at(c, parts, counts.at(probe)).fits;
    (fits ? above : below) = probe;
    if (fits != guess_fits) break;  // bracketed: the answer lies between below and above
  }
  while (above - below > 1) {
    const int64_t mid = below + (above - below) / 2;
    (at(c, parts, counts.at(mid)).fits ? above : below) = mid;
  }
  out.gpus = counts.at(above);
  return out;
}

}  // namespace model

}  // namespace trainfit
