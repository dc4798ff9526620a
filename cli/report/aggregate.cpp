#include "aggregate.h"

#include <algorithm>

namespace trainfit::cli::report {
namespace {

void add_oom(const Record& r, OomGpus* g) {
  ++g->jobs;
  g->gpus_requested += r.gpus_requested;
  if (r.min_gpus) g->gpus_needed += *r.min_gpus;
  else ++g->no_fit;
  if (!r.time_limit_min) return;  // GPU-hours need the job's time limit (--time)
  ++g->with_time_limit;
  // The GPUs the job holds: an --exclusive job holds its nodes' whole (audit gpus_held).
  const int64_t held = r.gpus_held.value_or(r.gpus_requested);
  g->gpu_hours += static_cast<double>(held) * static_cast<double>(*r.time_limit_min) / 60.0;
}

void add_host_ram(const Record& r, HostRam* h) {
  if (!r.host_ram_per_node_gb) return;
  ++h->jobs;
  h->largest_per_node_gb = std::max(h->largest_per_node_gb, *r.host_ram_per_node_gb);
  if (r.mem_per_node_gb && *r.host_ram_per_node_gb > *r.mem_per_node_gb) ++h->over_memory_request;
}

std::string or_none(const std::string& s) { return s.empty() ? "(none)" : s; }

}  // namespace

void Counts::add(const Record& r) {
  ++records;
  ++by_action[static_cast<size_t>(r.action)];
  if (is_oom(r) && (r.action == Action::kReject || r.action == Action::kWarn)) ++oom;
  if (is_check(r.action) && is_uncertain(r)) ++uncertain;
}

bool is_uncertain(const Record& r) {
  if (!r.capacity_gb || !r.likely_low_gb || !r.likely_high_gb || *r.likely_high_gb <= 0) return false;
  return *r.likely_low_gb <= *r.capacity_gb && *r.capacity_gb < *r.likely_high_gb;
}

const char* to_string(Dimension d) {
  switch (d) {
    case Dimension::kUser: return "user";
    case Dimension::kAccount: return "account";
    case Dimension::kPartition: return "partition";
    case Dimension::kGpu: return "gpu";
    case Dimension::kModel: return "model";
  }
  return "?";
}

std::string key_of(const Record& r, Dimension d) {
  switch (d) {
    case Dimension::kUser: return or_none(r.user);
    case Dimension::kAccount: return or_none(r.account);
    case Dimension::kPartition: return r.partition.empty() ? "(default)" : r.partition;
    case Dimension::kGpu: return or_none(r.gpu);
    case Dimension::kModel: return r.model;
  }
  return "";
}

void Aggregator::add(const Record& r) {
  Report& rep = *report_;
  rep.totals.add(r);
  for (size_t i = 0; i < std::size(kDimensions); ++i) rep.by[i][key_of(r, kDimensions[i])].add(r);
  if (r.action == Action::kResize && r.resized_to) {
    ++rep.resized;
    rep.gpus_added_by_resize += *r.resized_to - r.gpus_requested;
  }
  if (!r.advice.empty()) ++advice_[key_values(r.advice)];
  add_host_ram(r, &rep.host_ram);
  const bool rejected = r.action == Action::kReject, warned = r.action == Action::kWarn;
  if (!is_oom(r) || !(rejected || warned)) return;
  add_oom(r, rejected ? &rep.rejected : &rep.warned);
  const std::string key = r.model + '\n' + r.config + '\n' + r.gpu + '\n' + std::to_string(r.gpus_requested);
  OomConfig& c = configs_[key];
  if (c.count == 0) c.model = r.model, c.config = r.config, c.gpu = r.gpu, c.gpus = r.gpus_requested;
  ++c.count;
  ++(rejected ? c.rejected : c.warned);
  if (r.min_gpus) c.min_gpus = std::max(c.min_gpus.value_or(0), *r.min_gpus);
}

void Aggregator::finish(size_t top) {
  // Most frequent first; ties in key order (the maps' order), so output is stable.
  for (auto& [key, config] : configs_) report_->top_oom_configs.push_back(config);
  std::stable_sort(report_->top_oom_configs.begin(), report_->top_oom_configs.end(),
                   [](const OomConfig& a, const OomConfig& b) { return a.count > b.count; });
  if (report_->top_oom_configs.size() > top) report_->top_oom_configs.resize(top);
  for (auto& [advice, n] : advice_) report_->top_advice.push_back(AdviceCount{advice, n});
  std::stable_sort(report_->top_advice.begin(), report_->top_advice.end(),
                   [](const AdviceCount& a, const AdviceCount& b) { return a.count > b.count; });
  if (report_->top_advice.size() > top) report_->top_advice.resize(top);
}

}  // namespace trainfit::cli::report
