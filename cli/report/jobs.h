// `trainfit report --jobs`: the jobs Slurm holds or accounted, one a line, as
//   sacct -a -X -n -P -o State,Reason,AdminComment
//   squeue -a -h -t all -O "State:|,Reason:|,admin_comment:|"
// print them: "COMPLETED|None|trainfit accept: ...; decision 6b1695dc-2".
#pragma once

#include <string>

#include "trainfit/error.h"

namespace trainfit::cli::report {

struct JobLine {
  std::string decision_id;        // from the AdminComment's stamp; "" when it has none
  bool refused_by_slurm = false;  // FAILED for BadConstraints: the job never ran
};

constexpr const char* kJobColumns = "STATE|REASON|ADMINCOMMENT";
// The line's fields, or what is wrong with it (fewer than three '|'-separated columns).
Result<JobLine> parse_job_line(const std::string& line);

}  // namespace trainfit::cli::report
