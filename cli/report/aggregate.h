// `trainfit report`: the numbers, from typed records (docs/report.md defines each).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record.h"

namespace trainfit::cli::report {

struct Counts {
  std::array<int64_t, kActions> by_action{};  // indexed by Action
  int64_t records = 0;
  int64_t oom = 0;  // warned or rejected because the job does not fit (reason too_few_gpus)
  int64_t uncertain = 0;  // checked jobs whose likely range straddles the usable HBM (is_uncertain)
  int64_t of(Action a) const { return by_action[static_cast<size_t>(a)]; }
  int64_t checked() const { return records - of(Action::kExempt) - of(Action::kUnchecked); }
  void add(const Record& r);
};

// The job's likely range held its usable HBM: low end <= capacity < high end. The band where a
// policy's refuse_when and resize_to decide (docs/slurm.md); false for lines without a range.
bool is_uncertain(const Record& r);

// The breakdowns, in the order reports show them.
enum class Dimension { kUser, kAccount, kPartition, kGpu, kModel };
constexpr Dimension kDimensions[] = {Dimension::kUser, Dimension::kAccount, Dimension::kPartition, Dimension::kGpu,
                                     Dimension::kModel};
const char* to_string(Dimension d);

// GPUs asked for against GPUs needed, for jobs refused because they do not fit.
struct OomGpus {
  int64_t jobs = 0;                 // records with action reject (or warn) and reason too_few_gpus
  int64_t gpus_requested = 0;       // sum of gpus_requested
  int64_t gpus_needed = 0;          // sum of min_gpus_to_fit where one exists
  int64_t no_fit = 0;               // jobs with min_gpus_to_fit null: no count fits
  int64_t with_time_limit = 0;      // jobs whose record carries time_limit_min
  double gpu_hours = 0;             // sum of gpus_requested x time_limit_min / 60 over those
};

// Offload's host RAM against the jobs' memory requests (audit fields host_ram_per_node_gb,
// mem_per_node_gb).
struct HostRam {
  int64_t jobs = 0;                 // records with host_ram_per_node_gb: the step offloads
  int64_t over_memory_request = 0;  // those whose host RAM per node is more than mem_per_node_gb
  double largest_per_node_gb = 0;   // the largest host_ram_per_node_gb
};

struct OomConfig {  // one configuration that would have run out of memory
  std::string model, config, gpu;
  int64_t gpus = 0;
  int64_t count = 0, rejected = 0, warned = 0;
  std::optional<int64_t> min_gpus;  // the largest min_gpus_to_fit seen for it
};

struct AdviceCount {
  std::string advice;  // "recompute=full" (request field names, key_values)
  int64_t count = 0;
};

struct InputStats {
  std::vector<std::string> files;
  int64_t lines = 0, records = 0, outside_window = 0, malformed = 0, oversize = 0, unreadable_files = 0;
  std::optional<int64_t> first_time, last_time;  // of the records in the window
  // --jobs: the jobs' AdminComments read, and the admitted submissions in the window whose
  // decision id none of them carries (a --test-only probe, a job Slurm refused after trainfit):
  // left out of every count. None without --jobs.
  std::vector<std::string> job_files;
  int64_t stamped_jobs = 0;
  int64_t jobs_refused_by_slurm = 0;  // FAILED for BadConstraints at submission: never ran, confirm nothing
  std::optional<int64_t> unconfirmed;
};

struct Report {
  std::optional<int64_t> since, until;  // the window: since <= time < until
  InputStats input;
  Counts totals;
  std::map<std::string, Counts> by[std::size(kDimensions)];
  OomGpus rejected, warned;  // rejected: GPUs and GPU-hours saved; warned: ran anyway
  int64_t resized = 0, gpus_added_by_resize = 0;
  HostRam host_ram;
  std::vector<OomConfig> top_oom_configs;
  std::vector<AdviceCount> top_advice;
};

class Aggregator {
 public:
  explicit Aggregator(Report* report) : report_(report) {}
  void add(const Record& r);
  // Sorts and keeps the `top` most frequent configurations and advice.
  void finish(size_t top);

 private:
  Report* report_;
  std::map<std::string, OomConfig> configs_;
  std::map<std::string, int64_t> advice_;
};

// The key a record is counted under for a dimension ("(none)" for an empty field).
std::string key_of(const Record& r, Dimension d);

}  // namespace trainfit::cli::report
