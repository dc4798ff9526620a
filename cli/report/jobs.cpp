#include "jobs.h"

#include <string_view>

#include "trainfit/admission.h"

namespace trainfit::cli::report {
namespace {

// A submission Slurm refuses after job_submit admitted it (job_allocate's "fundamental flaw in
// job request", e.g. "Requested node configuration is not available") leaves a job record
// FAILED with reason FAIL_BAD_CONSTRAINTS and start = end = submit time (src/slurmctld/job_mgr.c
// job_allocate at slurm-22-05-8-1); squeue and sacct print the reason as "BadConstraints"
// (src/common/slurm_protocol_defs.c job_reason_string). Such a job never held its GPUs.
constexpr std::string_view kFailed = "FAILED", kBadConstraints = "BadConstraints";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<JobLine> parse_job_line(const std::string& line) {
  const size_t first = line.find('|');
  const size_t second = first == std::string::npos ? first : line.find('|', first + 1);
  if (second == std::string::npos) {
    return make_error(ErrorCode::kMalformed, "jobs", std::string("not ") + kJobColumns);
  }
  const std::string_view text = line;
  JobLine job;
  job.refused_by_slurm = trimmed(text.substr(0, first)) == kFailed &&
                         trimmed(text.substr(first + 1, second - first - 1)) == kBadConstraints;
  std::string_view comment = trimmed(text.substr(second + 1));
  if (!comment.empty() && comment.back() == '|') comment.remove_suffix(1);  // squeue's column suffix
  job.decision_id = admission::stamped_decision_id(comment);
  return job;
}

}  // namespace trainfit::cli::report
