// min_gpus_to_fit: the smallest valid GPU count at which the step fits.
// Valid: a multiple of tp*pp*cp (and of tp*pp*ep with experts); beyond one
// node, whole nodes when gpus_per_node is given.
#include <algorithm>
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

 private:
  int64_t unit_, node_;
  int64_t in_node_ = 0, node_step_ = 0, first_node_multiple_ = 0, size_ = 0;
};

bool fits_at(Config c, const model::SharedParts& parts, int64_t gpus) {
  c.num_gpus = gpus;
  return model::estimate_with(c, parts).fits;
}

// Nothing is split over the GPUs: every rank holds the whole model states and more data
// parallelism only adds ranks that each need as much.
bool nothing_sharded(const Config& c) { return c.zero_stage == 0 && c.tp == 1 && c.pp == 1 && c.ep == 1; }

// Why no count fits, from the widest job's breakdown; *unsharded: because nothing is sharded.
std::string why_none(const Config& c, const Breakdown& widest, int64_t gpus, bool* unsharded) {
  const double unshardable = widest.stage.activations.total() + widest.overheads.total();
  if (unshardable > widest.capacity) {
    return "activations and runtime overheads alone need " + format_gib(unshardable) + " GiB per GPU, more than the " +
           format_gib(widest.capacity) +
           " GiB available at any GPU count; recompute, a smaller micro-batch, TP or CP are needed";
  }
  const std::string needs = format_gib(widest.per_gpu_total) + " GiB per GPU (" + format_gib(widest.capacity) + " GiB available)";
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

MinGpus search_min_gpus(const Config& c, int64_t at_most, bool explain) {
  MinGpus out;
  const ValidCounts counts(c, at_most > 0 ? std::min(at_most, kMaxGpus) : kMaxGpus);
  if (counts.size() < 1) {
    out.reason = "tensor*pipeline*context parallel exceeds the largest supported job";
    return out;
  }
  // The widest job first: if even it does not fit, no count does.
  const SharedParts parts = shared_parts(c, true);  // only num_gpus varies below
  Config widest = c;
  widest.num_gpus = counts.at(counts.size());
  const Breakdown floor = estimate_with(widest, parts);
  if (!floor.fits) {
    if (explain) out.reason = why_none(c, floor, widest.num_gpus, &out.unsharded);
    return out;
  }
  // The first three counts one by one: the data-parallel communicator and DDP
  // buckets appear at two ranks and NCCL's buffers grow at three, so memory is
  // not monotone there. Beyond, per-GPU memory only falls as the sharding group
  // grows: gallop to bracket the answer, then bisect.
  const int64_t last = counts.size();
  for (int64_t i = 1; i <= std::min<int64_t>(3, last); ++i) {
    if (fits_at(c, parts, counts.at(i))) {
      out.gpus = counts.at(i);
      return out;
    }
  }
  int64_t below = 3, probe = std::min<int64_t>(4, last);
  while (!fits_at(c, parts, counts.at(probe))) {
    below = probe;
    probe = std::min(last, probe * 2);
  }
  while (probe - below > 1) {
    const int64_t mid = below + (probe - below) / 2;
    if (fits_at(c, parts, counts.at(mid))) probe = mid; else below = mid;
  }
  out.gpus = counts.at(probe);
  return out;
}

}  // namespace model

}  // namespace trainfit
