// Prometheus counters and a latency histogram, by path and status.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace trainfit::cli {

class Metrics {
 public:
  // path must come from a fixed set (see route_label) so the series stay bounded.
  void observe(const std::string& path, int status, double seconds);
  // The Prometheus text exposition format (version 0.0.4).
  std::string render() const;

 private:
  static constexpr std::array<double, 14> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
  struct Series {
    std::uint64_t count = 0;
    double sum = 0;
    std::array<std::uint64_t, kBuckets.size()> buckets{};  // not cumulative; render() sums
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, Series> series_;
};

}  // namespace trainfit::cli
