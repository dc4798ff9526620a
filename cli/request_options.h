// CLI flags for every request field, built from the request field table.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::cli {

// Adds --model, --gpus, --seq, ... (one per request field, in groups: model, training, ...)
// plus --request, --hf-config and --config.
void add_request_options(boost::program_options::options_description& visible,
                         boost::program_options::options_description& hidden);

// The captions of the groups add_request_options adds ("request files", "model", ...), in
// order: the man page lists them once, for every command that has them.
std::vector<std::string> request_option_groups();

// Builds the request: --request file (or - for stdin) first, then --hf-config, then
// --config (a framework's config file), then every explicit flag, each overriding what
// came before. notes (if given) receives what --config left out, to print on stderr.
Result<Request> request_from_options(const boost::program_options::variables_map& vm,
                                     std::vector<std::string>* notes = nullptr);

// A file the user named, whole ("-" = stdin), at most max_bytes; every file error in the
// CLI reads "FIELD='PATH': REASON" (file_problem): not found, cannot be read: WHY, is a
// directory, not a regular file, is N bytes; accepted: at most M.
Result<std::string> read_input(const std::string& path, const char* field, size_t max_bytes);
Error file_problem(const char* field, const std::string& path, ErrorCode code, const std::string& reason);

// The largest --request file (a request is a few hundred bytes).
constexpr size_t kMaxRequestFileBytes = 1 << 20;

}  // namespace trainfit::cli
