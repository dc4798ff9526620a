// Advice: the cheapest changes that make a step fit, in rough order of what
// they cost the run (throughput first, then engineering), each with its prediction.
#include <cstring>

#include "model.h"

#include "trainfit/estimate.h"

namespace trainfit {
namespace {

struct Candidate {
  const char* field;
  std::string value;
  Config config;
  std::vector<Change> implied;  // what the change also sets (sequence_parallel with TP), so
                               // that the advice typed back is the config estimated
};

// The candidate as changes: the main one, then what it implies.
std::vector<Change> changes_of(const Candidate& cand) {
  std::vector<Change> out = {{cand.field, cand.value}};
  out.insert(out.end(), cand.implied.begin(), cand.implied.end());
  return out;
}

std::vector<Change> with_gpus(std::vector<Change> changes, int64_t gpus) {
  changes.push_back({"num_gpus", std::to_string(gpus)});
  return changes;
}

bool valid(const Config& c) { return check_layout(c).ok() && c.geo.heads % c.tp == 0; }

// Single changes to a config, cheapest first, each handed to visit until it returns true
// (a refusal's advice wants the first that fits: the rest are never built).
template <typename Visit>
void for_each_candidate(const Config& c, Visit visit) {
  bool done = false;
  auto add = [&](const char* field, std::string value, auto change, std::vector<Change> implied = {}) {
    if (done) return;
    Config x = c;
    change(x);
    if (valid(x)) done = visit(Candidate{field, std::move(value), std::move(x), std::move(implied)});
  };
  // Megatron's core-attention recompute is "selective" in trainfit's words, but torchtitan
  // calls op-level checkpointing "selective": name it so that it means the same there.
  const char* core_attention = c.framework == Framework::kTorchtitan ? "core_attn" : "selective";
  if (c.recompute == Recompute::kNone) add("recompute", core_attention, [](Config& x) { x.recompute = Recompute::kSelective; });
  if (c.attention == Attention::kEager) add("attention", "flash", [](Config& x) { x.attention = Attention::kFlash; });
  if (c.loss == Loss::kStandard) add("loss", "chunked", [](Config& x) { x.loss = Loss::kChunked; });
  if (c.sharding == Sharding::kZero) {
    for (int stage = c.zero_stage + 1; stage <= 3; ++stage) {
      add("zero_stage", std::to_string(stage), [stage](Config& x) { x.zero_stage = stage; });
    }
  }
  for (int64_t mb = c.micro_batch / 2; mb >= 1; mb /= 2) {
    if (c.num_microbatches * c.micro_batch % mb != 0) continue;  // the global batch would change
    const int64_t accumulated = c.num_microbatches * c.micro_batch / mb;  // same global batch
    add("micro_batch", std::to_string(mb), [mb, accumulated](Config& x) {
      x.num_microbatches = accumulated;
      x.micro_batch = mb;
    }, {{"num_microbatches", std::to_string(accumulated)}});
  }
  if (c.framework == Framework::kTorchtitan && c.recompute == Recompute::kNone) {
    add("recompute", "op", [](Config& x) { x.recompute = Recompute::kOp; });
  }
  if (c.recompute != Recompute::kFull || c.recompute_every > 1) {
    add("recompute", "full", [](Config& x) {
      x.recompute = Recompute::kFull;
      x.recompute_every = 1;
    }, c.recompute_every > 1 ? std::vector<Change>{{"recompute_every", "1"}} : std::vector<Change>{});
  }
  // Only the parallelism the framework offers by itself (presets.cpp kParallelism), and
  // TP within a node: "tensor model parallelism should generally be used up to degree g
  // when using g-GPU servers" (Narayanan et al., SC'21, arXiv:2104.04473, section 3.3).
  const FrameworkParallelism offers = parallelism_of(c.framework);
  const int64_t node = c.gpus_per_node > 0 ? c.gpus_per_node : 64;  // 0: a Config built by hand, no nodes
  const int64_t most_tp = std::min<int64_t>(64, std::max(c.tp, node));
  for (int64_t tp = c.tp * 2; offers.tensor && tp <= 8 * c.tp && tp <= most_tp; tp *= 2) {
    add("tensor_parallel", std::to_string(tp), [tp](Config& x) {
      x.tp = tp;
      x.sp = true;
      x.num_gpus = std::max(x.num_gpus, tp * x.pp * x.cp);
    }, {{"sequence_parallel", "true"}});
  }
  // Megatron's sequence parallelism splits the norms' and dropouts' activations over the TP group
  // (Korthikanti et al., arXiv:2205.05198, section 4.2.2): offered wherever TP runs without it.
  if (offers.tensor && c.tp > 1 && !c.sp) add("sequence_parallel", "true", [](Config& x) { x.sp = true; });
  for (int64_t cp = c.cp * 2; offers.context && cp <= 8 * c.cp; cp *= 2) {
    add("context_parallel", std::to_string(cp), [cp](Config& x) {
      x.cp = cp;
      x.num_gpus = std::max(x.num_gpus, x.tp * x.pp * cp);
    });
  }
  if (!c.offload_optimizer) add("offload_optimizer", "true", [](Config& x) { x.offload_optimizer = true; });
  if (c.zero_stage == 3 && !c.offload_params) add("offload_params", "true", [](Config& x) { x.offload_params = true; });
}

std::vector<Candidate> candidates_for(const Config& c) {
  std::vector<Candidate> out;
  out.reserve(24);  // every candidate fits without reallocating Configs
  for_each_candidate(c, [&out](Candidate&& cand) {
    out.push_back(std::move(cand));
    return false;
  });
  return out;
}

bool has_field(const std::vector<Advice>& list, const std::string& field) {
  for (const Advice& a : list) if (a.field() == field) return true;
  return false;
}

// The candidate at the fewest GPUs where it fits, searched up to at_most (0: no limit).
std::optional<Advice> with_fewest_gpus(const Candidate& cand, int64_t at_most) {
  const MinGpus with = model::search_min_gpus(cand.config, at_most, false);
  if (with.gpus == 0) return std::nullopt;
  Config x = cand.config;
  x.num_gpus = std::max(with.gpus, x.num_gpus);
  const Breakdown at = estimate(x);
  return Advice{with_gpus(changes_of(cand), x.num_gpus), x.num_gpus, at.per_gpu_total / kGiB, at.fits};
}

// A later step's value for a field replaces an earlier one (tp=8, then tp=16: tp=16).
void set_change(std::vector<Change>& changes, Change change) {
  for (Change& have : changes) {
    if (have.field == change.field) {
      have.value = std::move(change.value);
      return;
    }
  }
  changes.push_back(std::move(change));
}

// Several changes at once, when no single change fits at any GPU count: greedily
// take the change that lowers the memory floor (the per-GPU need at the widest
// job) most, until some GPU count fits.
void add_combination(const Config& c, std::vector<Advice>& out) {
  Config current = c;
  std::vector<Change> changes;
  for (int step = 0; step < 4; ++step) {
    const Candidate* best = nullptr;
    double best_floor = 0;
    const std::vector<Candidate> options = candidates_for(current);
    for (const Candidate& cand : options) {
      Config widest = cand.config;
      widest.num_gpus = (int64_t{1} << 20) / (widest.tp * widest.pp * widest.cp * widest.ep) *
                        (widest.tp * widest.pp * widest.cp * widest.ep);
      const double floor = estimate(widest).per_gpu_total;
      if (best == nullptr || floor < best_floor) {
        best = &cand;
        best_floor = floor;
      }
    }
    if (best == nullptr) return;
    for (Change& change : changes_of(*best)) set_change(changes, std::move(change));
    current = best->config;
    const MinGpus with = model::search_min_gpus(current, 0, false);
    if (with.gpus > 0) {
      current.num_gpus = std::max(with.gpus, current.num_gpus);
      const Breakdown at = estimate(current);
      out.push_back({with_gpus(changes, current.num_gpus), current.num_gpus, at.per_gpu_total / kGiB, at.fits});
      return;
    }
  }
}

}  // namespace

std::string key_values(const std::vector<Change>& changes) {
  std::string out;
  for (const Change& change : changes) out += (out.empty() ? "" : " ") + change.field + "=" + change.value;
  return out;
}

std::optional<Advice> cheapest_fitting_change(const Config& c) {
  std::optional<Advice> found;
  for_each_candidate(c, [&](Candidate&& cand) {
    if (cand.config.num_gpus != c.num_gpus) return false;
    // A change whose model states alone overflow the GPU cannot fit: no full estimate
    // (a hopeless job's refusal would otherwise estimate every candidate).
    if (model::states_floor(cand.config) > cand.config.capacity_bytes) return false;
    const Breakdown b = estimate(cand.config);
    if (b.fits) found = Advice{changes_of(cand), c.num_gpus, b.per_gpu_total / kGiB, true};
    return b.fits;
  });
  return found;
}

std::optional<Advice> one_line_advice(const std::vector<Advice>& advice, int64_t gpus, int64_t min_gpus) {
  for (const Advice& a : advice) {
    if (a.fits && a.field() != "num_gpus" && a.num_gpus == gpus) return a;
  }
  if (min_gpus > 0) return std::nullopt;  // adding GPUs alone is already said
  for (const Advice& a : advice) if (a.fits) return a;
  return std::nullopt;
}

std::optional<Advice> way_out_of_none(const Config& c) {
  // advise()'s entries for a job that fits at no count, built only up to the first that
  // fits: no single change fits on its GPUs (cheapest_fitting_change's test), so they are
  // the candidates at their fewest GPUs (a field's first value only), else a combination.
  std::optional<Advice> found;
  if (c.defaults_vary_with_gpus) return found;  // advise() offers no more GPUs on one-GPU defaults
  std::vector<Advice> entries;
  for_each_candidate(c, [&](Candidate&& cand) {
    if (has_field(entries, cand.field)) return false;
    std::optional<Advice> with_more = with_fewest_gpus(cand, 0);
    if (!with_more) return false;
    if (with_more->fits) found = std::move(with_more);
    else entries.push_back(std::move(*with_more));
    return found.has_value();
  });
  if (found || !entries.empty()) return found;
  add_combination(c, entries);
  return entries.empty() ? std::nullopt : std::optional<Advice>(entries.front());
}

std::optional<Advice> way_out_for(const Request& request, const Config& c) {
  if (!c.defaults_vary_with_gpus) return way_out_of_none(c);
  const Result<Config> multi = model::resolved_at(request, 2, c.capacity_bytes);  // the run beyond one GPU
  return multi ? way_out_of_none(*multi) : std::nullopt;
}

void refresh_gpu_count_advice(const Request& request, const Config& c, std::vector<Advice>& advice) {
  if (!c.defaults_vary_with_gpus) return;
  for (Advice& a : advice) {
    if (a.field() != "num_gpus") continue;
    const Result<Config> there = model::resolved_at(request, a.num_gpus, c.capacity_bytes);
    if (!there) continue;
    const Breakdown b = estimate(*there);
    a.per_gpu_gb = b.per_gpu_total / kGiB;
    a.fits = b.fits;
  }
}

std::vector<Change> changes_besides_gpus(const std::vector<Change>& changes) {
  std::vector<Change> out;
  for (const Change& change : changes) if (change.field != "num_gpus") out.push_back(change);
  return out;
}

std::vector<Advice> advise(const Config& c) {
  const Breakdown now = estimate(c);
  return now.fits ? std::vector<Advice>{} : advise(c, now, min_gpus_to_fit(c));
}

std::vector<Advice> advise(const Config& c, const Breakdown& now, const MinGpus& more) {
  std::vector<Advice> fitting, combined;
  if (now.fits) return fitting;
  // Per field, the first (cheapest) value that fits at the asked GPU count. A change
  // that does not fit alone is offered with the fewest GPUs at which it fits, when
  // that beats adding GPUs alone.
  for (const Candidate& cand : candidates_for(c)) {
    const Breakdown b = estimate(cand.config);
    if (b.fits && cand.config.num_gpus == c.num_gpus) {
      if (!has_field(fitting, cand.field)) {
        fitting.push_back({changes_of(cand), c.num_gpus, b.per_gpu_total / kGiB, true});
      }
      continue;
    }
    // Beyond one GPU this config's defaults are not the framework's: no change with more GPUs.
    if (c.defaults_vary_with_gpus || has_field(combined, cand.field)) continue;
    // Only worth offering when it needs fewer GPUs than adding GPUs alone.
    std::optional<Advice> with_more = with_fewest_gpus(cand, more.gpus > 0 ? more.gpus - 1 : 0);
    if (with_more) combined.push_back(std::move(*with_more));
  }
  std::vector<Advice> out = fitting;
  for (Advice& a : combined) if (!has_field(out, a.field())) out.push_back(std::move(a));
  if (more.gpus > c.num_gpus) {
    Config x = c;
    x.num_gpus = more.gpus;
    const Breakdown b = estimate(x);
    out.push_back({{{"num_gpus", std::to_string(more.gpus)}}, more.gpus, b.per_gpu_total / kGiB, b.fits});
  }
  if (out.empty() && !c.defaults_vary_with_gpus) add_combination(c, out);
  return out;
}

}  // namespace trainfit
