// The seed's three charts of one Response, drawn with the chart layer. Every number
// comes from the response: its profiles, its breakdown and min_gpus_to_fit.
#include <algorithm>
#include <cmath>

#include "svg.h"
#include "trainfit/config.h"
#include "trainfit/util/counted.h"

namespace trainfit::plot {
namespace {

using detail::fixed;

const char* const kTotalColor = "#1f4e9c";
const char* const kStatesColor = "#d9730d";
const char* const kActivationsColor = "#2a9d5c";
const char* const kCapacityColor = "#c0392b";
const char* const kTransientsColor = "#8e6bbf";
const char* const kOverheadsColor = "#6f7c85";
const char* const kFreeColor = "#f2f2f2";
const char* const kYouColor = "#111111";

double gib(double bytes) { return bytes / kGiB; }
std::string gib_text(double gib_value) { return fixed(gib_value, 1) + " GiB"; }

// "53.0 GiB headroom" or "over by 12.3 GiB": the gap between the peak and the capacity.
std::string headroom_text(const Breakdown& b) {
  const double gap = gib(b.capacity) - gib(b.per_gpu_total);
  return gap >= 0 ? gib_text(gap) + " headroom" : "over by " + gib_text(-gap);
}

// A linear axis from 0 to a round number at or above `top`.
Axis memory_axis(double top, const std::string& label) {
  Axis a;
  a.label = label;
  const double step = detail::nice_ceiling(std::max(top, 1e-3) / 6.0);
  a.min = 0;
  a.max = std::ceil(top / step - 1e-9) * step;
  return a;
}

// Tall enough for the capacity and the request's peak with its likely range; the profile's
// far end (one GPU, the longest sequence) may run off the top rather than flatten the rest.
Axis per_gpu_axis(const Breakdown& b, double profile_max) {
  const double capacity = gib(b.capacity);
  const double top = std::max({1.25 * capacity, 1.15 * gib(b.per_gpu_total), 1.05 * gib(b.likely_high),
                               1.05 * std::min(profile_max, 3.0 * capacity)});
  return memory_axis(top, "per-GPU memory (GiB)");
}

Axis log_axis(double lo, double hi, const std::string& label) {
  Axis a;
  a.label = label;
  a.scale = Scale::kLog;
  a.binary_ticks = true;
  a.min = lo;
  a.max = hi > lo ? hi : lo * 2;
  return a;
}

Rule capacity_rule(const Breakdown& b) {
  Rule r;
  r.role = "capacity";
  r.legend = "capacity " + gib_text(gib(b.capacity));
  r.label = "capacity";
  r.at = gib(b.capacity);
  r.color = kCapacityColor;
  return r;
}

// The total's likely range, point by point, in the total's colour.
Band likely_band() {
  Band b;
  b.role = "likely-range";
  b.legend = "likely range";
  b.color = kTotalColor;
  return b;
}

Line line(const char* role, const std::string& legend, const char* color, bool dashed) {
  Line l;
  l.role = role;
  l.legend = legend;
  l.color = color;
  l.dashed = dashed;
  return l;
}

}  // namespace

LineChart gpus_chart(const Response& r) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  LineChart chart;
  chart.id = "gpus";
  chart.title = "Per-GPU memory vs GPU count";
  chart.subtitle = needs_line(c, b);
  Line floor = line("activations", "activations (floor)", kActivationsColor, true);
  Line states = line("model-states", "model states", kStatesColor, false);
  Line total = line("total", "total per GPU", kTotalColor, false);
  Band range = likely_band();
  double lo = static_cast<double>(c.num_gpus), hi = lo, profile_max = 0;
  for (const GpuPoint& p : r.mem_vs_gpus) {
    const double n = static_cast<double>(p.num_gpus);
    floor.points.push_back({n, p.activation_gb});
    states.points.push_back({n, p.model_state_gb});
    total.points.push_back({n, p.per_gpu_gb});
    range.spans.push_back({n, p.likely_low_gb, p.likely_high_gb});
    lo = std::min(lo, n);
    hi = std::max(hi, n);
    profile_max = std::max(profile_max, p.per_gpu_gb);
  }
  if (r.min_gpus.gpus > 0) hi = std::max(hi, static_cast<double>(r.min_gpus.gpus));
  chart.x = log_axis(lo, hi, "GPUs in the job (log scale)");
  chart.y = per_gpu_axis(b, profile_max);
  chart.bands = {range};
  chart.lines = {floor, states, total};
  chart.rules.push_back(capacity_rule(b));
  if (r.min_gpus.gpus > 0 && r.min_gpus.gpus != c.num_gpus) {
    Rule fit;
    fit.role = "min-gpus";
    fit.vertical = true;
    fit.at = static_cast<double>(r.min_gpus.gpus);
    fit.label = "fits from " + counted(r.min_gpus.gpus, "GPU");
    fit.legend = "min_gpus_to_fit " + std::to_string(r.min_gpus.gpus);
    fit.color = "#555555";
    chart.rules.push_back(fit);
  }
  Marker you;
  you.role = "request";
  you.at = {static_cast<double>(c.num_gpus), gib(b.per_gpu_total)};
  you.legend = "your " + std::to_string(c.num_gpus) + " GPU" + (c.num_gpus == 1 ? "" : "s");
  you.label = counted(c.num_gpus, "GPU") + ": " + gib_text(gib(b.per_gpu_total)) + ", " + headroom_text(b);
  you.color = b.fits ? kYouColor : kCapacityColor;
  chart.markers.push_back(you);
  return chart;
}

LineChart seq_chart(const Response& r) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  LineChart chart;
  chart.id = "seq";
  chart.title = "Per-GPU memory vs sequence length";
  chart.subtitle = needs_line(c, b);
  Line acts = line("activations", "activations", kActivationsColor, false);
  Line total = line("total", "total per GPU", kTotalColor, false);
  Band range = likely_band();
  double lo = static_cast<double>(c.seq_length), hi = lo, profile_max = 0;
  for (const SeqPoint& p : r.mem_vs_seq) {
    const double s = static_cast<double>(p.seq_length);
    acts.points.push_back({s, p.activation_gb});
    total.points.push_back({s, p.per_gpu_gb});
    range.spans.push_back({s, p.likely_low_gb, p.likely_high_gb});
    lo = std::min(lo, s);
    hi = std::max(hi, s);
    profile_max = std::max(profile_max, p.per_gpu_gb);
  }
  chart.x = log_axis(lo, hi, "sequence length (tokens, log scale)");
  chart.y = per_gpu_axis(b, profile_max);
  chart.bands = {range};
  chart.lines = {acts, total};
  chart.rules.push_back(capacity_rule(b));
  Marker you;
  you.role = "request";
  you.at = {static_cast<double>(c.seq_length), gib(b.per_gpu_total)};
  you.legend = "your seq " + detail::binary_label(static_cast<double>(c.seq_length));
  you.label = "seq " + std::to_string(c.seq_length) + ": " + gib_text(gib(b.per_gpu_total)) + ", " + headroom_text(b);
  you.color = b.fits ? kYouColor : kCapacityColor;
  chart.markers.push_back(you);
  return chart;
}

BarChart budget_chart(const Response& r) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  const StageMemory& s = b.stage;
  // The bar adds up to per_gpu_total = tensor peak + overheads. Model states and the saved
  // activations are what the peak holds unless the peak phase has freed some of them
  // (the optimizer step, gradients not yet allocated): then they are shown as held.
  const double states = std::min(s.states.total(), s.tensor_peak);
  const double activations = std::clamp(s.tensor_peak - states, 0.0, s.activations.total());
  const double transients = std::max(0.0, s.tensor_peak - states - activations);
  const double overheads = b.overheads.total();
  BarChart chart;
  chart.id = "budget";
  chart.title = std::string("Per-GPU budget at the ") + s.peak_phase + " peak, as shares of usable HBM";
  chart.subtitle = needs_line(c, b);
  chart.segments = {{"model-states", "model states " + gib_text(gib(states)), gib(states), kStatesColor},
                    {"activations", "activations " + gib_text(gib(activations)), gib(activations), kActivationsColor},
                    {"transients", "transients " + gib_text(gib(transients)), gib(transients), kTransientsColor},
                    {"overheads", "overheads " + gib_text(gib(overheads)), gib(overheads), kOverheadsColor}};
  chart.limit = gib(b.capacity);
  chart.limit_legend = "capacity " + gib_text(gib(b.capacity));
  chart.over = !b.fits;
  const double free = gib(b.capacity) - gib(b.per_gpu_total);
  if (free > 0) chart.segments.push_back({"free", "free " + gib_text(free), free, kFreeColor});
  chart.status = headroom_text(b);
  chart.x = memory_axis(1.06 * std::max(gib(b.capacity), gib(b.per_gpu_total)), "per-GPU memory (GiB)");
  return chart;
}

const char* to_string(Chart chart) {
  switch (chart) {
    case Chart::kGpus: return "gpus";
    case Chart::kSeq: return "seq";
    case Chart::kBudget: return "budget";
  }
  return "?";
}

Result<std::vector<Chart>> parse_charts(const std::string& name, const std::string& field) {
  if (name == "gpus") return std::vector<Chart>{Chart::kGpus};
  if (name == "seq") return std::vector<Chart>{Chart::kSeq};
  if (name == "budget") return std::vector<Chart>{Chart::kBudget};
  if (name == "all") return std::vector<Chart>{Chart::kGpus, Chart::kSeq, Chart::kBudget};
  return make_error(ErrorCode::kInvalidValue, field,
                    field + "='" + name + "' is not valid; accepted: gpus|seq|budget|all");
}

std::string response_svg(const Response& r, const std::vector<Chart>& charts) {
  std::vector<std::string> panels;
  for (Chart chart : charts) {
    switch (chart) {
      case Chart::kGpus: panels.push_back(render_panel(gpus_chart(r))); break;
      case Chart::kSeq: panels.push_back(render_panel(seq_chart(r))); break;
      case Chart::kBudget: panels.push_back(render_panel(budget_chart(r))); break;
    }
  }
  return svg_document(panels, "trainfit: " + needs_line(r.resolved.config, r.breakdown));
}

}  // namespace trainfit::plot
