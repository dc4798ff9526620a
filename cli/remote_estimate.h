// `trainfit estimate --endpoint URL[,URL...]`: the same output, computed by a service.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "trainfit/remote/client.h"
#include "trainfit/error.h"
#include "trainfit/request.h"

namespace trainfit::cli {

// --endpoint, --connect-timeout-ms, --timeout-ms, --cacert, --endpoint-fallback.
void add_client_options(boost::program_options::options_description& visible);

// The client's settings; nullopt when --endpoint is not given. Errors are one line
// naming the option, the value and what is accepted.
Result<std::optional<remote::Settings>> client_settings(const boost::program_options::variables_map& vm);

enum class RemoteRun {
  kPrinted,  // a service answered: its response or its error is printed
  kLocal,    // no endpoint answered and the fallback is local: compute here
  kRefused,  // no endpoint answered and the fallback is refuse
};

// Asks the endpoints and prints what a local run prints in this format; *exit_code is
// the local run's exit code for the same answer (0 fits, 1 does not fit, 2 bad input).
RemoteRun estimate_remotely(const remote::Settings& settings, const Request& request, const std::string& format,
                            int* exit_code);

}  // namespace trainfit::cli
