#include <cstdio>
#include <ctime>

#include "render.h"

namespace trainfit::cli::report {

std::string utc_text(int64_t seconds) {
  const time_t t = static_cast<time_t>(seconds);
  struct tm parts = {};
  char text[32] = "";
  if (gmtime_r(&t, &parts) != nullptr) std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string hours_text(double hours) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f", hours);
  return text;
}

}  // namespace trainfit::cli::report
