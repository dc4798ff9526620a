// Request -> the full response: estimate, min_gpus_to_fit, profiles, advice, verdict.

#include "trainfit/util/text.h"
#include "trainfit/catalog.h"
#include "trainfit/estimate.h"

namespace trainfit {

namespace {

// The response; `request`, when known, is what min_gpus_for searches beyond one GPU.
Response respond_to(const Resolved& resolved, const Request* request, ResponseOptions options) {
  Response r;
  r.resolved = resolved;
  const Config& c = resolved.config;
  r.breakdown = estimate(c);
  r.min_gpus = request != nullptr ? min_gpus_for(*request, c, r.breakdown) : min_gpus_to_fit(c, r.breakdown);
  r.global_batch = c.micro_batch * c.num_microbatches * c.data_parallel();
  if (options.profiles) {
    r.mem_vs_gpus = sweep_gpus(c);
    r.mem_vs_seq = sweep_seq(c);
  }
  if (options.advice) {
    r.advice = advise(c, r.breakdown, r.min_gpus);
    if (request != nullptr && c.defaults_vary_with_gpus) {  // beyond one GPU, as the framework runs there
      refresh_gpu_count_advice(*request, c, r.advice);
      if (!r.breakdown.fits && r.min_gpus.gpus == 0) {
        if (std::optional<Advice> way = way_out_for(*request, c)) r.advice.push_back(std::move(*way));
      }
    }
  }
  return r;
}

}  // namespace

Response respond(const Resolved& resolved, ResponseOptions options) { return respond_to(resolved, nullptr, options); }

Result<Response> respond(const Request& request, ResponseOptions options) {
  try {
    Result<Resolved> resolved = resolve(request);
    if (!resolved) return resolved.error();
    return respond_to(resolved.value(), &request, options);
  } catch (const std::exception& e) {  // e.g. bad_alloc: reported, never thrown across the API
    return make_error(ErrorCode::kInternal, "", std::string("internal error: ") + e.what());
  }
}

std::string gpu_label(const Config& c) {
  std::string gpu = c.gpu_name;
  if (gpu_in_catalog(gpu) != nullptr) {
    for (char& ch : gpu) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return gpu;
}

namespace {

// The prediction up to "GiB usable", the parenthesis left open for what follows.
std::string needs_open(const Config& c, const Breakdown& b) {
  std::string out = model_text(c);
  out.reserve(out.size() + 96);  // one buffer for the line (a refusal builds it inside slurmctld)
  out += " at seq ";
  out += std::to_string(c.seq_length);
  out += " needs ";
  out += format_gib(b.per_gpu_total);
  out += " GiB per GPU";
  if (b.likely_high > 0) {  // the published suite's range for the job's class (LikelyRange)
    out += " (likely ";
    out += format_gib(b.likely_low);
    out += " to ";
    out += format_gib(b.likely_high);
    out += ")";
  }
  out += " on ";
  out += std::to_string(c.num_gpus);
  out += " x ";
  out += gpu_label(c);
  out += " (";
  out += format_gib(b.capacity);
  out += " GiB usable";
  return out;
}

}  // namespace

std::string needs_line(const Config& c, const Breakdown& b) { return needs_open(c, b) + ")"; }

std::string verdict(const Response& r, ChangeSpeller spell) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  const std::string what = needs_open(c, b);
  const std::string percent = format_fixed(100.0 * b.per_gpu_total / b.capacity, 0) + "%";
  if (b.fits) return "FITS: " + what + ", " + percent + ")";
  std::string line = "OOM: " + what + "); min_gpus_to_fit=" + min_gpus_text(c, r.min_gpus.gpus);
  const std::optional<Advice> way_out = one_line_advice(r.advice, c.num_gpus, r.min_gpus.gpus);
  if (way_out) {
    line += " (or: " + spell(changes_besides_gpus(way_out->changes)) + " fits on " + std::to_string(way_out->num_gpus) + ")";
  }
  return line;
}

}  // namespace trainfit
