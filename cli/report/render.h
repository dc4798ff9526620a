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
std::string hours_text(double hours);   // "1234.5"

}  // namespace trainfit::cli::report
