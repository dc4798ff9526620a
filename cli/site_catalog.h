// Site catalogs for the CLI and the service (docs/site.md): the global --catalog-dir
// option, loading DIR/gpus.d and DIR/models.d before a command runs, and
// `trainfit check-config`.
#pragma once

#include <ostream>
#include <string>

namespace trainfit::cli {

// Takes `--catalog-dir DIR` / `--catalog-dir=DIR` out of argv (anywhere after the
// program name). "" or the usage problem.
std::string take_catalog_dir(int* argc, char** argv, std::string* dir);

// Reads the site catalogs (dir: the --catalog-dir value, "" for $TRAINFIT_CATALOG_DIR or
// /etc/trainfit) and makes them current. Problems go to `err` as "trainfit: FILE:LINE:
// ..." and the result is false (nothing installed); notes go there too when print_notes.
bool use_site_catalogs(const std::string& dir, bool print_notes, std::ostream& err);

// `trainfit check-config [FILE]`: trainfit.conf and the site catalogs, every problem as
// "FILE:LINE: message" on stdout; exit 2 when any, else 0 and one summary line.
int run_check_config(int argc, char** argv, const std::string& catalog_dir_option);

}  // namespace trainfit::cli
