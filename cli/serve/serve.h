// `trainfit serve`: the original simulator's HTTP API (docs/service.md).
#pragma once

#include <string>

namespace trainfit::cli {

// Runs the service until SIGTERM or SIGINT; argv[0] is "serve". Returns the exit code:
// 0 after a clean stop, 2 for bad options or an address that cannot be bound. On SIGHUP
// it reads the site catalogs again from catalog_dir (the --catalog-dir value; "" for
// $TRAINFIT_CATALOG_DIR or /etc/trainfit), as at start.
int run_serve(int argc, char** argv, const std::string& catalog_dir);

}  // namespace trainfit::cli
