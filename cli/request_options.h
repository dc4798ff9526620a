// CLI flags for every request field, built from the request field table.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::cli {

// Adds --model, --gpus, --seq, ... (one per request field) plus --request and --hf-config.
void add_request_options(boost::program_options::options_description& visible,
                         boost::program_options::options_description& hidden);

// Builds the request: --request file (or - for stdin) first, then --hf-config,
// then every explicit flag, each overriding what came before.
Result<Request> request_from_options(const boost::program_options::variables_map& vm);

// Reads a whole file ("-" = stdin); error names the path.
Result<std::string> read_text(const std::string& path, const char* field);

}  // namespace trainfit::cli
