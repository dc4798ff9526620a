#include "metrics.h"

#include <sstream>

namespace trainfit::cli {

void Metrics::observe(const std::string& path, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Series& s = series_[{path, status}];
  s.count++;
  s.sum += seconds;
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      s.buckets[i]++;
      break;
    }
  }
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  auto labels = [](const std::pair<std::string, int>& key) {
    return "path=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"";
  };
  out << "# HELP trainfit_http_requests_total HTTP requests answered, by path and status.\n"
         "# TYPE trainfit_http_requests_total counter\n";
  for (const auto& [key, s] : series_) out << "trainfit_http_requests_total{" << labels(key) << "} " << s.count << "\n";
  out << "# HELP trainfit_http_errors_total HTTP requests answered with status >= 400, by path and status.\n"
         "# TYPE trainfit_http_errors_total counter\n";
  for (const auto& [key, s] : series_) {
    if (key.second >= 400) out << "trainfit_http_errors_total{" << labels(key) << "} " << s.count << "\n";
  }
  out << "# HELP trainfit_http_request_duration_seconds Time from the request's headers to its response.\n"
         "# TYPE trainfit_http_request_duration_seconds histogram\n";
  for (const auto& [key, s] : series_) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += s.buckets[i];
      out << "trainfit_http_request_duration_seconds_bucket{" << labels(key) << ",le=\"" << kBuckets[i] << "\"} "
          << cumulative << "\n";
    }
    out << "trainfit_http_request_duration_seconds_bucket{" << labels(key) << ",le=\"+Inf\"} " << s.count << "\n";
    out << "trainfit_http_request_duration_seconds_sum{" << labels(key) << "} " << s.sum << "\n";
    out << "trainfit_http_request_duration_seconds_count{" << labels(key) << "} " << s.count << "\n";
  }
  return out.str();
}

}  // namespace trainfit::cli
