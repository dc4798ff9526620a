// `trainfit serve`: the original simulator's HTTP API (docs/service.md).
#pragma once

namespace trainfit::cli {

// Runs the service until SIGTERM or SIGINT; argv[0] is "serve". Returns the exit code:
// 0 after a clean stop, 2 for bad options or an address that cannot be bound.
int run_serve(int argc, char** argv);

}  // namespace trainfit::cli
