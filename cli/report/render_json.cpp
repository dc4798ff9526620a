// The JSON report: every number, for scripts and for the report test.
#include <nlohmann/json.hpp>

#include "render.h"

namespace trainfit::cli::report {
namespace {

using nlohmann::json;
constexpr Action kShown[] = {Action::kAccept, Action::kWarn, Action::kReject, Action::kResize, Action::kExempt,
                             Action::kUnchecked};

json counts_json(const Counts& c) {
  json j = {{"records", c.records}, {"checked", c.checked()}, {"oom", c.oom}, {"uncertain", c.uncertain}};
  for (Action a : kShown) j[to_string(a)] = c.of(a);
  return j;
}

json optional_json(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json oom_json(const OomGpus& g) {
  return {{"jobs", g.jobs},           {"gpus_requested", g.gpus_requested}, {"gpus_needed", g.gpus_needed},
          {"no_fit", g.no_fit},       {"with_time_limit", g.with_time_limit},
          {"without_time_limit", g.jobs - g.with_time_limit}, {"gpu_hours", g.gpu_hours}};
}

json input_json(const InputStats& in) {
  return {{"files", in.files},
          {"lines", in.lines},
          {"records", in.records},
          {"outside_window", in.outside_window},
          {"skipped_malformed", in.malformed},
          {"skipped_oversize", in.oversize},
          {"unreadable_files", in.unreadable_files},
          {"job_files", in.job_files},
          {"stamped_jobs", in.stamped_jobs},
          {"jobs_refused_by_slurm", in.jobs_refused_by_slurm},
          {"unconfirmed_submissions", in.unconfirmed ? json(*in.unconfirmed) : json(nullptr)},
          {"first_time", in.first_time ? json(utc_text(*in.first_time)) : json(nullptr)},
          {"last_time", in.last_time ? json(utc_text(*in.last_time)) : json(nullptr)}};
}

}  // namespace

void render_json(const Report& r, std::ostream& out) {
  json j;
  j["schema"] = "trainfit.report/1";
  j["window"] = {{"since", r.since ? json(utc_text(*r.since)) : json(nullptr)},
                 {"until", r.until ? json(utc_text(*r.until)) : json(nullptr)},
                 {"period", period_text(r)}};  // for people: "2026-12-01 08:00 – 2026-12-04 17:12 UTC (3 days)"
  j["input"] = input_json(r.input);
  j["totals"] = counts_json(r.totals);
  for (size_t i = 0; i < std::size(kDimensions); ++i) {
    json rows = json::array();
    for (const auto& [key, counts] : r.by[i]) {
      json row = counts_json(counts);
      row["key"] = key;
      rows.push_back(std::move(row));
    }
    j["by"][to_string(kDimensions[i])] = rows;
  }
  j["gpus"] = {{"rejected_oom", oom_json(r.rejected)}, {"warned_oom", oom_json(r.warned)},
               {"resized", r.resized}, {"gpus_added_by_resize", r.gpus_added_by_resize}};
  j["host_ram"] = {{"jobs", r.host_ram.jobs}, {"over_memory_request", r.host_ram.over_memory_request},
                   {"largest_per_node_gb", r.host_ram.largest_per_node_gb}};
  j["top_oom_configs"] = json::array();
  for (const OomConfig& c : r.top_oom_configs) {
    j["top_oom_configs"].push_back({{"model", c.model}, {"config", c.config}, {"gpu", c.gpu}, {"gpus", c.gpus},
                                    {"count", c.count}, {"rejected", c.rejected}, {"warned", c.warned},
                                    {"min_gpus_to_fit", optional_json(c.min_gpus)}});
  }
  j["top_advice"] = json::array();
  for (const AdviceCount& a : r.top_advice) j["top_advice"].push_back({{"advice", a.advice}, {"count", a.count}});
  // Replace, not throw, on bytes that are not UTF-8 (user text from the log).
  out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace trainfit::cli::report
