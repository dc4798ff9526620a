// `trainfit report`: what the job_submit plugin decided, from its audit log (docs/report.md).
#pragma once

namespace trainfit::cli {

// argv[0] is "report". Prints the report on stdout, warnings on stderr. Returns 0, or
// 2 for bad options or a file that cannot be read.
int run_report(int argc, char** argv);

}  // namespace trainfit::cli
