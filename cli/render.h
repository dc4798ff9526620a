// Human and machine renderings of responses and catalogs for the CLI.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "trainfit/estimate.h"

namespace trainfit::cli {

// Advice as CLI flags: "--tp=2 --sp --gpus=16".
std::string cli_flags(const std::vector<Change>& changes);
void print_estimate_table(std::ostream& out, const Response& r);
void print_estimate_csv(std::ostream& out, const Response& r);
void print_sweep_table(std::ostream& out, const Response& r, bool gpus, bool seq);
void print_sweep_csv(std::ostream& out, const Response& r, bool gpus, bool seq);
void print_models(std::ostream& out, bool json);
void print_gpus(std::ostream& out, bool json);
void print_fields(std::ostream& out, bool json);

}  // namespace trainfit::cli
