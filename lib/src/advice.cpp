// Advice: the cheapest changes that make a step fit, in rough order of what
// they cost the run (throughput first, then engineering), each with its prediction.
#include <functional>

#include "trainfit/estimate.h"

namespace trainfit {
namespace {

struct Candidate {
  const char* field;
  std::string value;
  Config config;
};

// "--tp=2": the CLI spelling of a change (the SPANK options prefix it with llm-).
std::string flag_change(const char* field, const std::string& value) {
  const FieldSpec* spec = find_field(field);
  return std::string("--") + (spec ? spec->flag : field) + "=" + value;
}

bool valid(const Config& c) {
  return layout_problem(c).empty() && c.geo.heads % c.tp == 0;
}

}  // namespace

std::vector<Advice> advise(const Config& c) {
  std::vector<Advice> out;
  const Breakdown now = estimate(c);
  if (now.fits) return out;
  std::vector<Candidate> candidates;
  auto add = [&](const char* field, std::string value, const std::function<void(Config&)>& change) {
    Config x = c;
    change(x);
    if (valid(x)) candidates.push_back({field, std::move(value), x});
  };
  if (c.recompute == Recompute::kNone) add("recompute", "selective", [](Config& x) { x.recompute = Recompute::kSelective; });
  if (c.attention == Attention::kEager) add("attention", "flash", [](Config& x) { x.attention = Attention::kFlash; });
  if (c.loss == Loss::kStandard) add("loss", "chunked", [](Config& x) { x.loss = Loss::kChunked; });
  if (c.sharding == Sharding::kZero && c.data_parallel() * c.cp > 1) {
    for (int stage = c.zero_stage + 1; stage <= 3; ++stage) {
      add("zero_stage", std::to_string(stage), [stage](Config& x) { x.zero_stage = stage; });
    }
  }
  for (int64_t mb = c.micro_batch / 2; mb >= 1; mb /= 2) {
    add("micro_batch", std::to_string(mb), [mb](Config& x) {
      x.num_microbatches = x.num_microbatches * x.micro_batch / mb;  // same global batch
      x.micro_batch = mb;
    });
  }
  if (c.recompute != Recompute::kFull) add("recompute", "full", [](Config& x) { x.recompute = Recompute::kFull; });
  for (int64_t tp = c.tp * 2; tp <= 8 * c.tp && tp <= c.num_gpus; tp *= 2) {
    add("tensor_parallel", std::to_string(tp), [tp](Config& x) {
      x.tp = tp;
      x.sp = true;
    });
  }
  for (int64_t cp = c.cp * 2; cp <= 8 * c.cp && cp <= c.num_gpus; cp *= 2) {
    add("context_parallel", std::to_string(cp), [cp](Config& x) { x.cp = cp; });
  }
  if (!c.offload_optimizer) add("offload_optimizer", "true", [](Config& x) { x.offload_optimizer = true; });
  if (c.zero_stage == 3 && !c.offload_params) add("offload_params", "true", [](Config& x) { x.offload_params = true; });

  // Keep, per field, the first (cheapest) value that fits, else the one that helps most.
  std::vector<Advice> fitting, helping;
  auto seen = [](const std::vector<Advice>& list, const std::string& field) {
    for (const Advice& a : list) if (a.field == field) return true;
    return false;
  };
  for (const Candidate& cand : candidates) {
    const Breakdown b = estimate(cand.config);
    if (b.per_gpu_total >= now.per_gpu_total) continue;
    Advice a{flag_change(cand.field, cand.value), cand.field, cand.value, b.per_gpu_total / kGiB, b.fits};
    if (b.fits) {
      if (!seen(fitting, a.field)) fitting.push_back(a);
    } else {
      helping.push_back(a);
    }
  }
  out = fitting;
  for (const Advice& a : helping) {
    if (seen(out, a.field)) continue;
    // Per field, only the strongest non-fitting option.
    const Advice* best = &a;
    for (const Advice& other : helping) if (other.field == a.field && other.per_gpu_gb < best->per_gpu_gb) best = &other;
    out.push_back(*best);
  }
  const MinGpus more = min_gpus_to_fit(c);
  if (more.gpus > c.num_gpus) {
    Config x = c;
    x.num_gpus = more.gpus;
    const Breakdown b = estimate(x);
    out.push_back({flag_change("num_gpus", std::to_string(more.gpus)), "num_gpus", std::to_string(more.gpus),
                   b.per_gpu_total / kGiB, b.fits});
  }
  return out;
}

}  // namespace trainfit
