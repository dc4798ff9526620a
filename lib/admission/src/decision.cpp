// The admission decision for one job: bounded work per listed partition (one
// resolve, one estimate, one min-GPU search; advice only when refusing).
//
// A job listing several partitions may run in any of them, so it is held to each:
// refusals that a resize cannot mend (annotation required or invalid, unknown GPU)
// in any partition refuse the job; a job that does not fit somewhere is resized when
// one of those partitions resizes and the resized job then fits in all of them;
// otherwise it is rejected unless every partition where it does not fit only warns.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>

#include "trainfit/util/text.h"
#include "internal.h"
#include "partition_nodes.h"
#include "resize.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/util/counted.h"

namespace trainfit::admission {
namespace {

// One job under one partition's policy.
struct Evaluation {
  std::string partition;  // "" = the default partition
  const PartitionPolicy* rules = nullptr;
  Result<Response> predicted = Error{};  // the prediction, or why there is none (none yet: no 1.2 KB Response built to be replaced)
  Reason reason = Reason::kNone;            // why there is none
  const Estimator* estimator = nullptr;  // where the response came from
  bool no_gpus = false;  // the job asks for none: it cannot run, whatever the prediction
  // What the prediction was made from: partitions whose rules give the same are estimated once.
  std::string gpu;
  int64_t num_gpus = 0;
  // Past the usable HBM on the figure the partition refuses on (refuse_when): the likely range's
  // low end (never above the point figure: `certain` refuses no job `likely` passes), or the point.
  bool over() const {
    const Breakdown& b = predicted->breakdown;
    const bool certain = rules->refuse_when == RefuseWhen::kCertain && b.likely_low > 0;
    return (certain ? std::min(b.likely_low, b.per_gpu_total) : b.per_gpu_total) > b.capacity;
  }
  bool fits() const { return predicted.ok() && !no_gpus && !over(); }
  // Not refused, yet the likely range reaches past the usable HBM: warned with the range.
  bool uncertain() const { return fits() && predicted->breakdown.likely_high > predicted->breakdown.capacity; }
  bool same_inputs(const Evaluation& other) const {
    return gpu == other.gpu && num_gpus == other.num_gpus && estimator == other.estimator &&
           rules->gpus_per_node == other.rules->gpus_per_node && rules->headroom == other.rules->headroom &&
           rules->resize_to == other.rules->resize_to;
  }
};

// The job's partitions, each once; reading stops at kMaxJobPartitions + 1 distinct ones (a
// longer list is refused in decide), so no list makes slurmctld's work grow past that.
std::vector<std::string> partitions_of(const std::string& list) {
  std::vector<std::string> out;
  for_each_part(list, ',', [&out](std::string_view part) {
    const std::string_view p = trimmed(part);
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.emplace_back(p);
    return out.size() <= kMaxJobPartitions;
  });
  if (out.empty()) out.emplace_back();
  return out;
}

// Whole-node jobs (--exclusive; a partition with OverSubscribe=EXCLUSIVE): Slurm allocates
// every GRES of an exclusive job's nodes (slurm.conf OverSubscribe, sbatch --exclusive).
bool holds_whole_nodes(const Policy& policy, const std::vector<std::string>& parts, const Job& job) {
  if (job.fields.whole_nodes) return true;
  for (const std::string& p : parts) {
    const std::string& name = p.empty() ? policy.default_partition : p;
    if (policy.whole_node_partitions.count(name) > 0) return true;
  }
  return false;
}

// GPUs on each of a whole-node job's nodes: the fewest among the partition's GPU nodes its
// constraint selects (slurm.conf's Gres=; the job may land on any of them), else the
// partition's gpus_per_node (slurm.conf does not say).
int64_t gpus_per_held_node(const Policy& policy, const std::string& partition, const Job& job) {
  const std::vector<NodeKind>* kinds = partition_kinds(policy, partition);
  int64_t fewest = 0;
  if (kinds != nullptr) {
    for (const NodeKind* kind : selected_kinds(*kinds, job.constraint)) {
      const int64_t each = kind->gpus_each();
      if (each > 0 && (fewest == 0 || each < fewest)) fewest = each;
    }
  }
  return fewest > 0 ? fewest : policy.for_partition(partition).gpus_per_node;
}

int64_t whole_node_gpus(const Policy& policy, const std::string& partition, const Job& job) {
  return gpus_per_held_node(policy, partition, job) * std::max<int64_t>(1, std::max(job.fields.nodes, int64_t{0}));
}

// A whole-node job that names fewer GPUs than its nodes have still holds them all: on
// 22.05 `sbatch --exclusive --gres=gpu:h100:2` on a 64-GPU node runs with JOB_GRES=gpu:h100:64
// (scontrol show job -d; src/slurmctld/gres_ctld.c at slurm-22-05-8-1 gives an exclusive job
// every GRES of its nodes). The judgement stays on the GPUs asked for (fewer GPUs hold more
// per GPU under sharding: the conservative side); the decision says what the job holds.
void note_whole_nodes(const Policy& policy, const Job& job, const std::vector<std::string>& parts, Decision* d) {
  if (job.step || d->gpus_requested <= 0 || d->verdict == Verdict::kPass || d->exempt) return;  // a step holds what it names
  if (parts.empty() || parts.size() > kMaxJobPartitions) return;  // refused for its list
  if (!holds_whole_nodes(policy, parts, job)) return;
  const int64_t per_node = gpus_per_held_node(policy, parts.front(), job);
  const int64_t judged = d->resized_to > 0 ? d->resized_to : d->gpus_requested;
  const int64_t nodes = std::max({int64_t{1}, job.fields.nodes, (judged + per_node - 1) / per_node});
  if (per_node * nodes <= judged) return;
  d->gpus_held = per_node * nodes;
  d->held_because = job.fields.whole_nodes ? "--exclusive" : "OverSubscribe=EXCLUSIVE";
  if (!d->message.empty()) {
    d->message += " (" + d->held_because + ": the job holds " + std::to_string(d->gpus_held) + " x " + d->gpu +
                  "; judged on " + std::to_string(judged) + " of them)";
  }
}

bool exempt(const PartitionPolicy& p, const Job& job) {
  return p.exempt_uids.count(job.uid) > 0 || (!job.account.empty() && p.exempt_accounts.count(job.account) > 0) ||
         (!job.qos.empty() && p.exempt_qos.count(job.qos) > 0);
}

// Which field of a job_gpu error says the partition has no GPU nodes (not an unknown GPU).
constexpr const char* kNoGpuNodesField = "partition";

// The smallest-memory catalog GPU of `types` so far (every rank must fit on it).
Result<bool> keep_smallest(const Policy& policy, const std::string& type, const GpuSpec** smallest) {
  Result<const GpuSpec*> gpu = catalog_gpu(policy, type);
  if (!gpu) return gpu.error();
  if (*smallest == nullptr || gpu.value()->capacity_bytes < (*smallest)->capacity_bytes) *smallest = gpu.value();
  return true;
}

// The GPUs an untyped request gets: those of the partition's GPU nodes its --constraint
// selects (slurm.conf), an untyped node's (gpu:N) or an unknown partition's as default_gpu.
Result<bool> untyped_gpu(const Policy& policy, const PartitionPolicy& rules, const std::string& partition,
                         const Job& job, bool asks_gpus, const GpuSpec** smallest) {
  const std::vector<NodeKind>* kinds = partition_kinds(policy, partition);
  if (kinds == nullptr) return keep_smallest(policy, rules.default_gpu, smallest);
  bool any = false;
  for (const NodeKind* kind : selected_kinds(*kinds, job.constraint)) {
    for (const NodeGpus& g : kind->gpus) {
      Result<bool> kept = keep_smallest(policy, g.type.empty() ? rules.default_gpu : g.type, smallest);
      if (!kept) return kept;
      any = true;
    }
  }
  if (any) return true;
  if (!asks_gpus) return keep_smallest(policy, rules.default_gpu, smallest);  // the advice's GPU
  const std::string name = partition.empty() ? policy.default_partition : partition;
  return make_error(ErrorCode::kInvalidValue, kNoGpuNodesField,
                    "partition " + name + " has no nodes with GPUs (slurm.conf); a job asking for GPUs cannot run "
                    "there: submit it to a GPU partition (-p)");
}

// The catalog GPU to check against: the GRES types (the smallest-memory one when a job
// mixes types, since every rank must fit), and for untyped GPUs the partition's.
// Not inlined: its frame (errors, lookups) is gone before evaluate's prediction goes deep.
[[gnu::noinline]] Result<std::string> job_gpu(const Policy& policy, const PartitionPolicy& rules, const std::string& partition,
                            const Job& job, const GpuTotal& gpus, bool asks_gpus) {
  const GpuSpec* smallest = nullptr;
  for (const std::string& type : gpus.types) {
    Result<bool> kept = keep_smallest(policy, type, &smallest);
    if (!kept) return kept.error();
  }
  if (gpus.types.empty() || gpus.untyped) {
    Result<bool> kept = untyped_gpu(policy, rules, partition, job, asks_gpus, &smallest);
    if (!kept) return kept.error();
  }
  return smallest->name;
}

// A partition judged from the same inputs as one before it takes that one's prediction. Out of
// line: copying a prediction needs a temporary that evaluate's frame would otherwise carry.
[[gnu::noinline]] bool took_earlier_prediction(const std::vector<Evaluation>& earlier, Evaluation& e) {
  for (const Evaluation& before : earlier) {
    if (&before == &e || before.gpu.empty() || !before.same_inputs(e)) continue;
    e.predicted = before.predicted;
    e.reason = before.reason;
    return true;
  }
  return false;
}

// Fills e in place (an Evaluation holds a ~1.2 KB Response: built where it is kept, not moved there).
// A partition judged from the same inputs as one before it (GPU, count, layout, headroom) takes
// that one's prediction: a list of many partitions costs one estimate per distinct rule set.
void evaluate(const Policy& policy, const std::string& partition, const Job& job, const GpuTotal& gpus,
              int64_t num_gpus, const Estimator& estimator, const std::vector<Evaluation>& earlier, Evaluation& e) {
  e.partition = partition;
  e.rules = &policy.for_partition(partition);
  e.estimator = &estimator;
  e.no_gpus = num_gpus == 0;
  e.num_gpus = num_gpus;
  Result<std::string> gpu = job_gpu(policy, *e.rules, partition, job, gpus, num_gpus > 0);
  if (!gpu) {
    e.predicted = gpu.error();
    e.reason = gpu.error().field == kNoGpuNodesField ? Reason::kGpuRequest : Reason::kUnknownGpu;
    return;
  }
  e.gpu = gpu.value();
  if (took_earlier_prediction(earlier, e)) return;
  // On the heap, not the stack: each stack page slurmctld's fresh RPC thread touches costs a page
  // fault (resolve.cpp), and this copy is 1.8 KB.
  auto request = std::make_unique<Request>(job.annotation.request);
  request->gpu = std::move(gpu).value();
  request->gpu_memory_gb.reset();
  request->num_gpus = std::max<int64_t>(1, num_gpus);
  request->gpus_per_node = e.rules->gpus_per_node;  // the partition's layout, not the annotation's
  request->fit_bound = e.rules->resize_to == FitBound::kLikelyHigh ? "likely_high" : "point";  // min_gpus_to_fit's bound
  // min_gpus_to_fit is what a refusal or a resize needs; an accepted job gets it
  // only when the user asked (--llm-check): the common path stays cheap.
  Result<Response> predicted = estimator.predict(*request, e.rules->headroom, job.annotation.check || e.no_gpus);
  if (!predicted) e.reason = predicted.error().field == "num_gpus" ? Reason::kGpuRequest : Reason::kInvalidAnnotation;
  e.predicted = std::move(predicted);
}

class LocalEstimator : public Estimator {
 public:
  Result<Response> predict(const Request& request, double headroom, bool with_min_gpus) const override {
    Response r;
    Result<bool> resolved = resolve_into(request, &r.resolved);  // in place: one Resolved on the stack, not two
    if (!resolved) return resolved.error();
    r.resolved.config.capacity_bytes *= 1.0 - headroom;  // the fraction of HBM kept free
    const Config& c = r.resolved.config;
    r.breakdown = estimate(c);
    if (!r.breakdown.fits || with_min_gpus) r.min_gpus = min_gpus_for(request, c, r.breakdown);
    if (!r.breakdown.fits && r.min_gpus.gpus == 0) {
      // No GPU count fits as the job is: its one advice now, while the request is at hand (a
      // way out with more GPUs or several changes is found on the run beyond one GPU). Rare,
      // so these searches are paid only by a job that would otherwise hear "none".
      std::optional<Advice> advice = cheapest_fitting_change(c);
      if (!advice) advice = way_out_for(request, c);
      if (advice) r.advice.push_back(std::move(*advice));
    }
    const double batch = static_cast<double>(c.micro_batch) * static_cast<double>(c.num_microbatches) *
                         static_cast<double>(c.data_parallel());
    r.global_batch = batch < 9e18 ? static_cast<int64_t>(batch) : INT64_MAX;
    return r;
  }

  std::optional<Advice> cheapest_change(const Response& response) const override {
    if (response.min_gpus.gpus == 0) return one_line_advice(response.advice, response.resolved.config.num_gpus, 0);
    return cheapest_fitting_change(response.resolved.config);
  }
};

// Reject, unless every listed partition only warns.
Verdict refusal(const Policy& policy, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    if (policy.for_partition(p).action != Action::kWarn) return Verdict::kReject;
  }
  return Verdict::kWarn;
}

Decision refuse(Verdict verdict, Reason reason, std::string message) {
  return decision_of(verdict, reason, std::move(message));
}

std::string where(const Evaluation& e, size_t partitions) {
  return partitions > 1 ? "partition " + (e.partition.empty() ? std::string("(default)") : e.partition) + ": " : "";
}

// What the user wrote that the partition's layout replaced.
std::string layout_note(const Job& job, const PartitionPolicy& rules) {
  const std::optional<int64_t>& asked = job.annotation.request.gpus_per_node;
  if (!asked || *asked == rules.gpus_per_node) return "";
  return " (" + spell_key("gpus_per_node", job.annotation.face) + "=" + std::to_string(*asked) +
         " replaced by the partition's " + counted(rules.gpus_per_node, "GPU") + " per node)";
}

void fill_numbers(const Evaluation& e, Decision* d) {
  const Response& r = *e.predicted;
  d->gpu = r.resolved.config.gpu_name;
  d->per_gpu_gb = r.breakdown.per_gpu_total / kGiB;
  d->capacity_gb = r.breakdown.capacity / kGiB;
  d->likely_low_gb = r.breakdown.likely_low / kGiB;
  d->likely_high_gb = r.breakdown.likely_high / kGiB;
  d->min_gpus = r.min_gpus.gpus;
  d->min_gpus_bound = to_string(r.resolved.config.fit_bound);
  d->global_batch = r.global_batch;
}

// "warning: offload needs 131.3 GiB of host RAM per node (8 GPUs x 16.4 GiB), more than the job's ..."
std::string host_ram_warning(double per_gpu, int64_t gpus, double have, const JobMemory& memory) {
  return "warning: offload needs " + format_gib(per_gpu * static_cast<double>(gpus)) + " GiB of host RAM per node (" +
         counted(gpus, "GPU") + " x " + format_gib(per_gpu) + " GiB), more than the job's " + format_gib(have) +
         " GiB per node (" + memory.written() + "): raise it, or --mem=0 for the nodes' whole memory";
}

// Offload's host RAM on the job's fullest node against the job's memory request: a warning
// in the message, never a refusal by itself (docs/slurm.md, "Host RAM for offload").
void check_host_ram(const Job& job, const Evaluation& e, int64_t nodes, Decision* d) {
  if (!e.predicted) return;
  const Config& c = e.predicted->resolved.config;
  const double per_gpu = e.predicted->breakdown.host_offload_per_gpu;
  if (per_gpu <= 0) return;
  nodes = std::max<int64_t>(1, nodes);
  const int64_t gpus = std::max<int64_t>(1, std::min(c.gpus_per_node, (c.num_gpus + nodes - 1) / nodes));
  const double need = per_gpu * static_cast<double>(gpus), have = static_cast<double>(job.memory.total_mb()) * (1 << 20);
  d->host_ram_per_node_gb = need / kGiB;
  d->memory_per_node_gb = have / kGiB;
  if (have <= 0 || need <= have) return;
  d->host_ram_short = true;
  const std::string warning = host_ram_warning(per_gpu, gpus, have, job.memory);
  d->message = d->message.empty() ? "trainfit: " + warning : d->message + "; " + warning;
}

std::string min_text(const Response& r) { return min_gpus_text(r.resolved.config, r.min_gpus.gpus); }

// "llama3-70b at seq 8192 needs ...; min_gpus_to_fit=22 (or: --llm-recompute=full fits on 8)";
// `why` (may be ""): what the refusal was judged on, after the prediction.
std::string oom_body(const Response& r, const std::optional<Advice>& cheapest, Face face, const char* why = "") {
  std::string line = needs_line(r.resolved.config, r.breakdown) + why + "; min_gpus_to_fit=" + min_text(r);
  if (!cheapest) return line;
  return line + " (or: " + spell_changes(changes_besides_gpus(cheapest->changes), face) + " fits on " +
         std::to_string(cheapest->num_gpus) + ")";
}

// The refusal text for the partition where the job does not fit, with advice (also
// returned as data for the audit log).
std::string oom_text(const Evaluation& e, const Job& job, const GpuTotal& gpus, size_t partitions,
                     std::vector<Change>* advice) {
  const Response& r = *e.predicted;
  if (gpus.gpus == 0) {
    return "trainfit: " + where(e, partitions) + "the job is annotated for LLM training but requests no GPUs; " +
           "min_gpus_to_fit=" + min_text(r) + " (add --gpus=" + r.resolved.config.gpu_name + ":N)";
  }
  const std::optional<Advice> cheapest = e.estimator->cheapest_change(r);
  if (cheapest) *advice = cheapest->changes;
  const bool certain = e.rules->refuse_when == RefuseWhen::kCertain && r.breakdown.likely_low > 0;
  return "trainfit: " + where(e, partitions) +
         oom_body(r, cheapest, job.annotation.face, certain ? "; past the usable HBM even at its likely low end" : "") +
         layout_note(job, *e.rules);
}

// A job every listed partition lets run, whose likely range reaches past the usable HBM of `e`.
// Out of line: an accepted job's path never builds this message.
[[gnu::noinline]] std::string uncertain_text(const Evaluation& e, const Job& job, size_t partitions) {
  const Response& r = *e.predicted;
  return "trainfit: " + where(e, partitions) + "warning: may not fit: " + needs_line(r.resolved.config, r.breakdown) +
         "; the likely range's high end is past the usable HBM" +
         (r.min_gpus.gpus > 0 ? "; min_gpus_to_fit=" + min_text(r) : std::string()) + layout_note(job, *e.rules);
}

// Every listed partition lets the job run. The partition reported: one where its likely range
// reaches past the usable HBM (the job is warned with the range, never passed in silence; the
// widest reach first), else the tightest (the highest share of HBM used).
Decision admitted(const Job& job, const std::vector<Evaluation>& now, int64_t gpus_requested) {
  const Evaluation* shown = &now.front();
  for (const Evaluation& e : now) {
    const Breakdown& b = e.predicted->breakdown;
    const Breakdown& s = shown->predicted->breakdown;
    const bool wider_reach = e.uncertain() && (!shown->uncertain() || b.likely_high / b.capacity > s.likely_high / s.capacity);
    const bool tighter = !e.uncertain() && !shown->uncertain() && b.per_gpu_total / b.capacity > s.per_gpu_total / s.capacity;
    if (wider_reach || tighter) shown = &e;
  }
  Decision d;
  fill_numbers(*shown, &d);
  d.gpus_requested = gpus_requested;
  d.verdict = Verdict::kAccept;
  if (shown->uncertain()) {
    d.verdict = Verdict::kWarn;
    d.reason = Reason::kUncertainFit;
    d.message = uncertain_text(*shown, job, now.size());
  } else if (job.annotation.check) {
    const Response& r = *shown->predicted;
    d.message = "trainfit: fits: " + needs_line(r.resolved.config, r.breakdown) + "; min_gpus_to_fit=" + min_text(r) +
                layout_note(job, *shown->rules);
  }
  check_host_ram(job, *shown, job.fields.nodes, &d);
  return d;
}

// A resize never asks for more GPU nodes, or GPUs, than a listed partition has (slurm.conf;
// nodes without GPUs, or without the job's GPU type, do not count): Slurm would refuse the
// resized job ("Requested node configuration is not available").
std::optional<std::string> beyond_gpu_nodes(const Policy& policy, const Job& job, const GpuTotal& gpus,
                                            const std::vector<std::string>& parts, int64_t granted, int64_t nodes) {
  const std::string type = gpus.types.size() == 1 && !gpus.untyped ? gpus.types.front() : "";
  for (const std::string& p : parts) {
    const std::vector<NodeKind>* kinds = partition_kinds(policy, p);
    if (kinds == nullptr) continue;
    const GpuNodes have = gpu_nodes(selected_kinds(*kinds, job.constraint), type);
    if (nodes <= have.nodes && granted <= have.gpus) continue;
    const std::string name = p.empty() ? policy.default_partition : p;
    return "laid out in whole nodes/tasks it needs " + counted(granted, "GPU") + " on " + counted(nodes, "node") +
           ", but partition " + name + " has " + counted(have.nodes, "GPU node") + (type.empty() ? "" : " with " + type) + " (" +
           counted(have.gpus, "GPU") + ")";
  }
  return std::nullopt;
}

Decision try_resize(const Policy& policy, const Job& job, const GpuTotal& gpus, const std::vector<Evaluation>& now,
                    const std::vector<std::string>& parts) {
  int64_t target = 0, limit = kMaxJobGpus, per_node = kMaxJobGpus;
  const Evaluation* failing = nullptr;
  for (const Evaluation& e : now) {
    per_node = std::min(per_node, e.rules->gpus_per_node);
    if (e.fits()) continue;
    if (failing == nullptr) failing = &e;
    if (e.rules->action == Action::kResize) limit = std::min(limit, e.rules->resize_max_gpus);
    if (e.predicted->min_gpus.gpus == 0) target = -1;
    if (target >= 0) target = std::max(target, e.predicted->min_gpus.gpus);
  }
  const Reason reason = gpus.gpus == 0 ? Reason::kGpuRequest : Reason::kTooFewGpus;
  std::vector<Change> advice;
  const std::string oom = oom_text(*failing, job, gpus, parts.size(), &advice);
  auto refuse = [&](std::string message) {  // a resizing partition is listed: never only a warning
    Decision d = admission::refuse(Verdict::kReject, reason, std::move(message));
    fill_numbers(*failing, &d);
    d.advice = advice;
    d.gpus_requested = gpus.gpus;
    return d;
  };
  if (target <= 0) return refuse(oom);
  if (target > limit) return refuse(oom + "; more than this partition's resize limit of " + counted(limit, "GPU"));
  if (gpus.types.size() > 1) return refuse(oom + "; a job mixing GPU types is not resized");
  const ResizePlan plan = plan_resize(job.fields, gpus, target, per_node);
  if (plan.granted == 0) return refuse(oom + "; one task's GPUs are more than a node of this partition has");
  if (plan.granted > limit) {  // rounding up to whole nodes or tasks went past the limit
    return refuse(oom + "; laid out in whole nodes/tasks it needs " + counted(plan.granted, "GPU") +
                  ", more than this partition's resize limit of " + std::to_string(limit));
  }
  const int64_t nodes = plan.nodes > 0 ? plan.nodes : std::max<int64_t>(1, job.fields.nodes);
  for (const std::string& p : parts) {  // a job asking more nodes than its partition has never starts
    const std::string name = p.empty() ? policy.default_partition : p;
    const auto most = policy.partition_max_nodes.find(name);
    if (most != policy.partition_max_nodes.end() && nodes > most->second) {
      return refuse(oom + "; laid out in whole nodes/tasks it needs " + counted(nodes, "node") + ", more than partition " +
                    name + " allows a job (" + std::to_string(most->second) + ")");
    }
  }
  if (std::optional<std::string> short_of = beyond_gpu_nodes(policy, job, gpus, parts, plan.granted, nodes)) {
    return refuse(oom + "; " + *short_of);
  }
  if (plan.tasks >= int64_t{UINT32_MAX} - 2 || plan.nodes >= int64_t{UINT32_MAX} - 2) {
    return refuse(oom + "; the resized task or node count is out of Slurm's range");
  }
  std::vector<Evaluation> after;
  after.reserve(parts.size());
  for (const std::string& p : parts) {
    evaluate(policy, p, job, gpus, plan.granted, *failing->estimator, after, after.emplace_back());
    if (!after.back().fits()) {
      return refuse(oom + "; the resized job (" + counted(plan.granted, "GPU") + ") would not fit either");
    }
  }
  Decision d;
  fill_numbers(*failing, &d);
  d.gpus_requested = gpus.gpus;
  d.verdict = Verdict::kResize;
  d.resized_to = plan.granted;
  d.new_tres_per_job = plan.tres_per_job;
  d.new_tres_per_node = plan.tres_per_node;
  d.new_tres_per_task = plan.tres_per_task;
  d.clear_tres_per_socket = plan.clear_tres_per_socket;
  d.new_nodes = plan.nodes;
  d.new_tasks = plan.tasks;
  const Response& first = *failing->predicted;
  const Response& resized = *after.front().predicted;
  d.message = "trainfit: resized from " + std::to_string(gpus.gpus) + " to " + std::to_string(plan.granted) + " x " +
              gpu_label(resized.resolved.config) + (plan.layout.empty() ? "" : " (" + plan.layout + ")") + ": " +
              (gpus.gpus > 0 ? needs_line(first.resolved.config, first.breakdown) + "; " : "") +
              format_gib(resized.breakdown.per_gpu_total) + " GiB on " + std::to_string(plan.granted) + "; global batch " +
              std::to_string(first.global_batch) + " -> " + counted(resized.global_batch, "sequence") +
              (plan.tasks_note.empty() ? "" : "; " + plan.tasks_note) + layout_note(job, *failing->rules);
  d.global_batch = resized.global_batch;
  d.per_gpu_gb = resized.breakdown.per_gpu_total / kGiB;
  d.likely_low_gb = resized.breakdown.likely_low / kGiB;
  d.likely_high_gb = resized.breakdown.likely_high / kGiB;
  check_host_ram(job, after.front(), plan.nodes > 0 ? plan.nodes : job.fields.nodes, &d);
  return d;
}

}  // namespace

std::string JobMemory::written() const {
  if (per_node_mb > 0) return "--mem=" + std::to_string(per_node_mb) + "M";
  return "--mem-per-cpu=" + std::to_string(per_cpu_mb) + "M x " + counted(cpus_per_node, "CPU");
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kAccept: return "accept";
    case Verdict::kWarn: return "warn";
    case Verdict::kReject: return "reject";
    case Verdict::kResize: return "resize";
  }
  return "?";
}

const char* to_string(Reason r) {
  switch (r) {
    case Reason::kNone: return "";
    case Reason::kInvalidAnnotation: return "invalid_annotation";
    case Reason::kGpuRequest: return "gpu_request";
    case Reason::kTooFewGpus: return "too_few_gpus";
    case Reason::kAnnotationRequired: return "annotation_required";
    case Reason::kUnknownGpu: return "unknown_gpu";
    case Reason::kInternal: return "internal";
    case Reason::kRestateRequired: return "restate_required";
    case Reason::kUncertainFit: return "uncertain_fit";
  }
  return "?";
}

std::string spell_changes(const std::vector<Change>& changes, Face face) {
  std::string out, spec;
  for (const Change& change : changes) {
    std::string key = spell_key(change.field, face);
    if (change.field == "num_gpus") key = "--gpus";
    if (face == Face::kOptions && key.rfind("--llm-spec=", 0) == 0) {
      spec += (spec.empty() ? "" : ",") + change.field + "=" + change.value;
      continue;
    }
    out += (out.empty() ? "" : " ") + key + "=" + change.value;
  }
  if (!spec.empty()) out += (out.empty() ? "" : " ") + std::string("--llm-spec=") + spec;
  return out;
}

std::string oom_message(const Response& r, Face face) {
  return "trainfit: " + oom_body(r, one_line_advice(r.advice, r.resolved.config.num_gpus, r.min_gpus.gpus), face);
}

const Estimator& local_estimator() {
  static const LocalEstimator local;
  return local;
}

namespace {
Decision decide_submission(const Policy& policy, const Job& job, const std::vector<std::string>& parts,
                           const Estimator& estimator) {
  if (parts.size() > kMaxJobPartitions) {
    return refuse(Verdict::kReject, Reason::kInvalidAnnotation,
                  "trainfit: the job names more than " + std::to_string(kMaxJobPartitions) +
                      " distinct partitions; accepted: at most " + std::to_string(kMaxJobPartitions));
  }
  bool all_exempt = true, requires = false;
  std::string requiring;
  for (const std::string& p : parts) {
    const PartitionPolicy& rules = policy.for_partition(p);
    all_exempt &= exempt(rules, job);
    const std::string& name = p.empty() ? policy.default_partition : p;
    if (rules.require_annotation && !requires) requires = true, requiring = name.empty() ? "(default)" : name;
  }
  if (all_exempt) {
    Decision d;
    d.exempt = true;
    return d;
  }
  Result<GpuTotal> gpus = total_gpus(job.fields);
  if (!gpus) {
    if (!job.annotation.found && !requires) return Decision{};
    return refuse(Verdict::kReject, Reason::kGpuRequest, "trainfit: " + gpus.error().message);
  }
  // A whole-node job that names no GPUs still holds every GPU of its nodes.
  const bool whole = gpus->gpus == 0 && !gpus->gpu_shares && holds_whole_nodes(policy, parts, job);
  if (whole) {
    gpus->untyped = true;
    gpus->source = "whole nodes";
    gpus->gpus = whole_node_gpus(policy, parts.front(), job);
    gpus->written = job.fields.whole_nodes ? "--exclusive" : "OverSubscribe=EXCLUSIVE";
  }
  if (!job.annotation.found) {
    if (!requires || (gpus->gpus == 0 && !gpus->gpu_shares)) return Decision{};  // a CPU job is not an LLM training job
    if (job.het_component > 0) return Decision{};  // a later component of a job the first one annotates
    return refuse(Verdict::kReject, Reason::kAnnotationRequired,
                  "trainfit: partition " + requiring + " requires an LLM training annotation for GPU jobs" +
                      (whole ? " (" + gpus->written + ": the job holds its nodes' " + counted(gpus->gpus, "GPU") + ")"
                             : std::string()) +
                      ": add --llm-model=NAME (and --llm-seq, --llm-zero, ...) or --comment=\"trainfit: model=NAME "
                      "seq=N\"");
  }
  if (!job.annotation_read) {
    Decision d = refuse(refusal(policy, parts), Reason::kInvalidAnnotation, "trainfit: invalid annotation: " + job.annotation_read.error().message);
    d.gpus_requested = gpus->gpus;
    return d;
  }
  std::vector<Evaluation> now;
  now.reserve(parts.size());
  for (const std::string& p : parts) {
    const int64_t held = whole ? whole_node_gpus(policy, p, job) : gpus->gpus;
    evaluate(policy, p, job, gpus.value(), held, estimator, now, now.emplace_back());
  }
  for (const Evaluation& e : now) {
    if (e.predicted) continue;
    const std::string what = e.reason == Reason::kInvalidAnnotation        ? "invalid annotation: "
                             : e.predicted.error().field == kNoGpuNodesField        ? ""
                             : e.reason == Reason::kGpuRequest           ? "the GPU request does not suit the annotation: "
                                                                         : "";
    Decision d = refuse(refusal(policy, parts), e.reason, "trainfit: " + where(e, parts.size()) + what + e.predicted.error().message);
    d.gpus_requested = gpus->gpus;
    return d;
  }
  const bool all_fit = std::all_of(now.begin(), now.end(), [](const Evaluation& e) { return e.fits(); });
  if (all_fit) return admitted(job, now, gpus->gpus);
  bool resize = false, reject = false;
  for (const Evaluation& e : now) {
    if (e.fits()) continue;
    // Not resized: whole nodes (nothing to resize), a hetjob component (the job's total is not
    // in view, so a resize could take it past resize_max_gpus).
    resize |= e.rules->action == Action::kResize && !job.step && !whole && job.het_component < 0;
    reject |= e.rules->action != Action::kWarn;
  }
  if (resize) return try_resize(policy, job, gpus.value(), now, parts);
  const Evaluation& failing = *std::find_if(now.begin(), now.end(), [](const Evaluation& e) { return !e.fits(); });
  std::vector<Change> advice;
  Decision d = refuse(reject ? Verdict::kReject : Verdict::kWarn,
                      gpus->gpus == 0 ? Reason::kGpuRequest : Reason::kTooFewGpus,
                      oom_text(failing, job, gpus.value(), parts.size(), &advice));
  fill_numbers(failing, &d);
  d.advice = std::move(advice);
  d.gpus_requested = gpus->gpus;
  check_host_ram(job, failing, job.fields.nodes, &d);
  return d;
}

}  // namespace

Decision decide(const Policy& policy, const Job& job, const Estimator& estimator) {
  const std::vector<std::string> parts = partitions_of(job.partition);  // read once for both
  Decision d = decide_submission(policy, job, parts, estimator);
  note_whole_nodes(policy, job, parts, &d);
  return d;
}

}  // namespace trainfit::admission
