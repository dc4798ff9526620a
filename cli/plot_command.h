// trainfit plot and trainfit policy (docs/charts.md). Exit codes: 0 written, 2 bad input,
// usage or a file that cannot be written.
#pragma once

namespace trainfit::cli {

// argv[0] is the command's name.
int run_plot(int argc, char** argv);
int run_policy(int argc, char** argv);

}  // namespace trainfit::cli
