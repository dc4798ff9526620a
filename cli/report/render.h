// `trainfit report`: one renderer per format, each in its own file (render_*.cpp).
#pragma once

#include <ostream>
#include <string>

#include "aggregate.h"

namespace trainfit::cli::report {

void render_table(const Report& report, std::ostream& out);
void render_csv(const Report& report, std::ostream& out);
void render_json(const Report& report, std::ostream& out);
void render_html(const Report& report, std::ostream& out);
void render_prometheus(const Report& report, std::ostream& out);

// Shared by the renderers.
std::string utc_text(int64_t seconds);  // "2026-12-03T08:00:00Z"
std::string hours_text(double hours);   // "1234.5" (machine formats: always one decimal)
std::string shown_hours(double hours);  // for people: "1234.5", and "0" for none
// "3 jobs offload (at most 131.3 GiB per node); 1 job asked for less memory per node than that (--mem)"
std::string host_ram_text(const HostRam& host_ram);
std::string minute_text(int64_t seconds);  // "2026-12-03 08:00" (UTC)
// The window as people read it: "2026-12-01 08:00 – 2026-12-04 17:12 UTC (3 days)"; an open
// end is the first or last record's time, and the text says so.
std::string period_text(const Report& report);
// What the admitted submissions counted are: confirmed against --jobs, or not (--test-only
// probes and jobs Slurm refused after trainfit look the same to job_submit).
std::string confirmation_text(const InputStats& input);

}  // namespace trainfit::cli::report
