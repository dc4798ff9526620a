#include <cmath>
#include <cstdio>
#include <ctime>

#include "render.h"
#include "trainfit/util/counted.h"

namespace trainfit::cli::report {
namespace {

std::string utc_format(int64_t seconds, const char* format) {
  const time_t t = static_cast<time_t>(seconds);
  struct tm parts = {};
  char text[32] = "";
  if (gmtime_r(&t, &parts) != nullptr) std::strftime(text, sizeof text, format, &parts);
  return text;
}

// "45 minutes", "9 hours", "3 days": the period's length, rounded to its largest unit.
std::string length_text(int64_t seconds) {
  const int64_t minutes = (seconds + 30) / 60;
  if (minutes < 60) return counted(minutes, "minute");
  if (minutes < 48 * 60) return counted((minutes + 30) / 60, "hour");
  return counted((minutes + 12 * 60) / (24 * 60), "day");
}

// What an open end of the window was replaced with.
const char* open_ends(const Report& r) {
  if (!r.since && !r.until) return ", first to last record";
  if (!r.since) return ", from the first record";
  if (!r.until) return ", to the last record";
  return "";
}

}  // namespace

std::string utc_text(int64_t seconds) { return utc_format(seconds, "%Y-%m-%dT%H:%M:%SZ"); }

std::string minute_text(int64_t seconds) { return utc_format(seconds, "%Y-%m-%d %H:%M"); }

std::string period_text(const Report& r) {
  const std::optional<int64_t> from = r.since ? r.since : r.input.first_time;
  const std::optional<int64_t> to = r.until ? r.until : r.input.last_time;
  if (from && to) {
    return minute_text(*from) + " \u2013 " + minute_text(*to) + " UTC (" + length_text(*to - *from) + open_ends(r) + ")";
  }
  if (r.since) return "since " + minute_text(*r.since) + " UTC (no records)";
  if (r.until) return "until " + minute_text(*r.until) + " UTC (no records)";
  return "no records";
}

std::string hours_text(double hours) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f", hours);
  return text;
}

std::string host_ram_text(const HostRam& h) {
  if (h.jobs == 0) return "no job offloads to host RAM";
  char largest[48];
  std::snprintf(largest, sizeof largest, "%.1f", h.largest_per_node_gb);
  return counted(h.jobs, "job") + " offload (at most " + largest + " GiB per node); " +
         counted(h.over_memory_request, "job") + " asked for less memory per node than that (--mem)";
}

std::string shown_hours(double hours) { return hours == 0 ? "0" : hours_text(hours); }

std::string confirmation_text(const InputStats& in) {
  if (!in.unconfirmed) {
    return "admitted submissions not confirmed (no --jobs): they include sbatch/srun --test-only probes and jobs "
           "Slurm refused after trainfit";
  }
  return "admitted submissions confirmed against " + counted(in.stamped_jobs, "job") + " with a trainfit decision (" +
         std::to_string(in.jobs_refused_by_slurm) + " refused by Slurm not counted); " +
         counted(*in.unconfirmed, "admitted submission") + " that no job carries left out";
}

}  // namespace trainfit::cli::report
