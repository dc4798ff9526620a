// What the request commands share: parsing one command's options with "did you mean",
// and the smallest GPU count a request's parallel layout allows (min-gpus, policy).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/request.h"

namespace trainfit::cli {

// An options group for --help. boost never wraps it (one line per option); help_text wraps it.
boost::program_options::options_description help_group(const std::string& caption);

// The options' help wrapped at the terminal's width ($COLUMNS where set, 40 to 100000, else 80):
// boost cuts a word longer than its column anywhere ("to rchtitan"); here a long word is cut
// only after a separator (- | , / _ . : =), and only where no whole word fits.
std::string help_text(const boost::program_options::options_description& options);

// A flag as a framework spells it (--batch-size, --seq-len, --tensor-model-parallel-size): the
// hint naming trainfit's flag among `flags`, "" when it is no such spelling.
std::string framework_spelling(const std::string& name, const std::vector<std::string>& flags);

// Parses argv (argv[0] = the command) into vm; returns false when the command is done:
// --help printed (*exit_code 0) or a usage error printed on stderr (*exit_code 2).
bool parse_command(int argc, char** argv, boost::program_options::options_description& visible,
                   const boost::program_options::options_description& hidden,
                   boost::program_options::variables_map& vm, int* exit_code);

// The first word on the command line that is no option's value ("" when none): the
// commands take no positional arguments, so a stray word is refused, not ignored.
std::string first_positional(const boost::program_options::parsed_options& parsed);

// "unexpected argument 'WORD'; see 'trainfit COMMAND --help'".
std::string unexpected_argument(const std::string& command, const std::string& word);

// min-gpus answers whatever GPU count is asked, so without --gpus it starts from the
// smallest count the parallel layout allows (lcm of tp*pp*cp and tp*pp*ep), not from 1,
// which a layout with tp > 1 would refuse. Out-of-range sizes are left to resolve().
std::optional<int64_t> smallest_layout(const Request& request);

// This machine's name (gethostname), the node_name a response carries; "localhost" when unknown.
std::string host_name();

}  // namespace trainfit::cli
