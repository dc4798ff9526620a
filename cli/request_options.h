// CLI flags for every request field, built from the request field table.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::cli {

// Adds --model, --gpus, --seq, ... (one per request field) plus --request, --hf-config
// and --config.
void add_request_options(boost::program_options::options_description& visible,
                         boost::program_options::options_description& hidden);

// Builds the request: --request file (or - for stdin) first, then --hf-config, then
// --config (a framework's config file), then every explicit flag, each overriding what
// came before. notes (if given) receives what --config left out, to print on stderr.
Result<Request> request_from_options(const boost::program_options::variables_map& vm,
                                     std::vector<std::string>* notes = nullptr);

// Reads a whole file ("-" = stdin); error names the path.
Result<std::string> read_text(const std::string& path, const char* field);

}  // namespace trainfit::cli
