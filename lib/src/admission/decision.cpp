// The admission decision for one job: bounded work (one resolve, one estimate,
// one min-GPU search; advice only when the step does not fit).
#include <cmath>

#include "../text.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"

namespace trainfit::admission {
namespace {

// "--recompute=full --gpus=24 --sp" -> "--llm-recompute=full --gpus=24 --llm-spec=sp=true".
std::string as_slurm_flags(const std::string& change) {
  std::string out;
  for (const std::string& token : split(change, ' ')) {
    if (token.rfind("--", 0) != 0) continue;
    std::string flag = token.substr(2), value = "true";
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    std::string spelled;
    if (flag == "gpus") {
      spelled = "--gpus=" + value;
    } else {
      spelled = "--llm-spec=" + flag + "=" + value;
      for (const OptionSpec& o : llm_options()) {
        if (flag == o.option && o.field[0] != '\0') spelled = "--llm-" + flag + "=" + value;
      }
    }
    out += (out.empty() ? "" : " ") + spelled;
  }
  return out;
}

// Warn under action = warn; reject otherwise (resize cannot mend these).
Decision refuse(Action action, std::string message) {
  Decision d;
  d.verdict = action == Action::kWarn ? Verdict::kWarn : Verdict::kReject;
  d.message = std::move(message);
  return d;
}

}  // namespace

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

std::string oom_message(const Response& r) {
  const Config& c = r.resolved.config;
  std::string line = "trainfit: " + needs_line(c, r.breakdown) + "; min_gpus_to_fit=" +
                     (r.min_gpus.gpus > 0 ? std::to_string(r.min_gpus.gpus) : std::string("none"));
  // The cheapest change that fits on the GPUs asked for, if there is one.
  for (const Advice& a : r.advice) {
    if (!a.fits || a.field == "num_gpus" || a.num_gpus != c.num_gpus) continue;
    line += " (or: " + as_slurm_flags(a.change) + " fits on " + std::to_string(c.num_gpus) + ")";
    break;
  }
  return line;
}

Decision decide(const Policy& policy, const Job& job) {
  const PartitionPolicy& rules = policy.for_partition(job.partition);
  if (!job.annotated) {
    if (!rules.require_annotation) return Decision{};
    return refuse(Action::kReject, "trainfit: partition " + job.partition +
                                       " requires an LLM training annotation: add --llm-model=NAME (and --llm-seq, "
                                       "--llm-zero, ...) or --comment=\"trainfit: model=NAME seq=N\"");
  }
  Request request = job.annotation;
  // The GPU comes from the job's GRES type, else the partition's default.
  std::string gpu = job.gpus.type.empty() ? rules.default_gpu : job.gpus.type;
  if (!find_gpu(gpu).ok()) {
    return refuse(rules.action, "trainfit: GPU type '" + gpu + "' of this job is not in trainfit's catalog; " +
                                    find_gpu(gpu).error().message);
  }
  request.gpu = gpu;
  request.gpu_memory_gb.reset();
  request.num_gpus = std::max<int64_t>(1, job.gpus.gpus);
  if (!request.gpus_per_node) request.gpus_per_node = rules.gpus_per_node;
  Result<Resolved> resolved = resolve(request);
  if (!resolved) {
    return refuse(rules.action, "trainfit: invalid annotation: " + resolved.error().message);
  }
  resolved->config.capacity_bytes *= 1.0 - rules.headroom;  // the fraction of HBM kept free
  ResponseOptions options;
  options.profiles = false;
  options.advice = false;
  Response r = respond(resolved.value(), options);
  if (!r.breakdown.fits && rules.action != Action::kResize) r.advice = advise(r.resolved.config, r.breakdown, r.min_gpus);

  Decision d;
  d.gpu = resolved->config.gpu_name;
  d.per_gpu_gb = r.breakdown.per_gpu_total / kGiB;
  d.capacity_gb = r.breakdown.capacity / kGiB;
  d.min_gpus = r.min_gpus.gpus;
  d.global_batch = r.global_batch;
  if (job.gpus.gpus == 0) {
    d.verdict = rules.action == Action::kWarn ? Verdict::kWarn : Verdict::kReject;
    d.message = "trainfit: the job is annotated for LLM training but requests no GPUs; min_gpus_to_fit=" +
                (d.min_gpus > 0 ? std::to_string(d.min_gpus) : std::string("none")) + " (add --gpus=" + gpu + ":N)";
    if (rules.action != Action::kResize || d.min_gpus == 0) return d;
  } else if (r.breakdown.fits) {
    d.verdict = Verdict::kAccept;
    return d;
  }
  if (rules.action != Action::kResize) {
    d.verdict = rules.action == Action::kWarn ? Verdict::kWarn : Verdict::kReject;
    d.message = oom_message(r);
    return d;
  }
  // Resize to min_gpus_to_fit, within the policy's maximum.
  if (d.min_gpus == 0 || d.min_gpus > rules.resize_max_gpus) {
    r.advice = advise(r.resolved.config, r.breakdown, r.min_gpus);
    d.verdict = Verdict::kReject;
    d.message = oom_message(r) + (d.min_gpus > rules.resize_max_gpus
                                      ? "; more than this partition's resize limit of " +
                                            std::to_string(rules.resize_max_gpus) + " GPUs"
                                      : "");
    return d;
  }
  Config resized = r.resolved.config;
  resized.num_gpus = d.min_gpus;
  const Breakdown after = estimate(resized);
  const int64_t new_batch = resized.micro_batch * resized.num_microbatches * resized.data_parallel();
  d.verdict = Verdict::kResize;
  d.resized_to = d.min_gpus;
  const int64_t per_node = rules.gpus_per_node;
  Result<TresList> original = parse_tres(job.gpus.source == std::string("tres_per_node") ? job.fields.per_node
                                                                                          : job.fields.per_job);
  const TresList kept = original ? original.value() : TresList{};
  if (std::string(job.gpus.source) == "tres_per_node" && d.resized_to > per_node) {
    d.new_tres_per_node = rewrite_tres(kept, job.gpus.type, per_node);
    d.new_nodes = d.resized_to / per_node;
  } else if (std::string(job.gpus.source) == "tres_per_node") {
    d.new_tres_per_node = rewrite_tres(kept, job.gpus.type, d.resized_to);
    d.new_nodes = 1;
  } else {
    d.new_tres_per_job = rewrite_tres(kept, job.gpus.type, d.resized_to);
    d.new_nodes = d.resized_to > per_node ? (d.resized_to + per_node - 1) / per_node : 0;
  }
  d.message = "trainfit: resized from " + std::to_string(job.gpus.gpus) + " to " + std::to_string(d.resized_to) +
              " x " + gpu_label(resized) + ": " + needs_line(r.resolved.config, r.breakdown) + "; " +
              format_gib(after.per_gpu_total) + " GiB on " + std::to_string(d.resized_to) + "; global batch " +
              std::to_string(d.global_batch) + " -> " + std::to_string(new_batch) + " sequences";
  d.global_batch = new_batch;
  d.per_gpu_gb = after.per_gpu_total / kGiB;
  return d;
}

}  // namespace trainfit::admission
