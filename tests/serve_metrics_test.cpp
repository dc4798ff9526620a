// The service's Prometheus metrics: counters and the latency histogram after requests whose
// paths, statuses and durations the test chose (docs/service.md, "Metrics").
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "serve/metrics.h"

namespace trainfit::cli {
namespace {

// The histogram's bucket bounds as the exposition writes them, in order.
const std::vector<std::pair<std::string, double>> kBounds = {
    {"0.0001", 0.0001}, {"0.00025", 0.00025}, {"0.0005", 0.0005}, {"0.001", 0.001}, {"0.0025", 0.0025},
    {"0.005", 0.005},   {"0.01", 0.01},       {"0.025", 0.025},   {"0.05", 0.05},   {"0.1", 0.1},
    {"0.25", 0.25},     {"0.5", 0.5},         {"1", 1},           {"2.5", 2.5}};

struct Observation {
  std::string path;
  int status;
  double seconds;
};

// "name{labels} value" lines -> value by "name{labels}"; comments skipped.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

std::string labels(const std::string& path, int status) {
  return "path=\"" + path + "\",status=\"" + std::to_string(status) + "\"";
}

class MetricsTest : public ::testing::Test {
 protected:
  void record(const std::vector<Observation>& observations) {
    for (const Observation& o : observations) metrics.observe(o.path, o.status, o.seconds);
    recorded.insert(recorded.end(), observations.begin(), observations.end());
  }
  // The observations of one series.
  std::vector<double> durations(const std::string& path, int status) const {
    std::vector<double> out;
    for (const Observation& o : recorded) {
      if (o.path == path && o.status == status) out.push_back(o.seconds);
    }
    return out;
  }

  Metrics metrics;
  std::vector<Observation> recorded;
};

TEST_F(MetricsTest, NothingRecordedIsOnlyTheHeaders) {
  const std::string text = metrics.render();
  EXPECT_TRUE(samples(text).empty()) << text;
  for (const char* name : {"trainfit_http_requests_total", "trainfit_http_errors_total",
                           "trainfit_http_request_duration_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
    EXPECT_NE(text.find(std::string("# HELP ") + name + " "), std::string::npos) << name;
  }
}

TEST_F(MetricsTest, CountersByPathAndStatus) {
  record({{"/healthz", 200, 0.0002}, {"/edge/training", 200, 0.003}, {"/healthz", 200, 0.0004},
          {"/edge/training", 400, 0.0001}, {"other", 404, 0.00005}, {"/edge/training", 200, 0.02}});
  const auto got = samples(metrics.render());
  for (const auto& [path, status] : std::vector<std::pair<std::string, int>>{
           {"/healthz", 200}, {"/edge/training", 200}, {"/edge/training", 400}, {"other", 404}}) {
    const std::string count = std::to_string(durations(path, status).size());
    EXPECT_EQ(got.at("trainfit_http_requests_total{" + labels(path, status) + "}"), count) << path << status;
    const auto error = got.find("trainfit_http_errors_total{" + labels(path, status) + "}");
    if (status >= 400) {
      ASSERT_NE(error, got.end()) << path << status;
      EXPECT_EQ(error->second, count);
    } else {
      EXPECT_EQ(error, got.end()) << path << status << " is not an error";
    }
  }
}

TEST_F(MetricsTest, HistogramIsCumulativeWithSumAndCount) {
  // On a bound counts in that bucket (le: less than or equal); past the last only in +Inf.
  record({{"/edge/training", 200, 0.0001}, {"/edge/training", 200, 0.0007}, {"/edge/training", 200, 0.0007},
          {"/edge/training", 200, 0.3}, {"/edge/training", 200, 4.0}, {"/healthz", 200, 0.00003}});
  const auto got = samples(metrics.render());
  for (const auto& [path, status] : std::vector<std::pair<std::string, int>>{{"/edge/training", 200}, {"/healthz", 200}}) {
    const std::vector<double> seen = durations(path, status);
    const std::string series = "trainfit_http_request_duration_seconds";
    for (const auto& [text, bound] : kBounds) {
      std::size_t at_most = 0;
      for (double s : seen) at_most += s <= bound ? 1 : 0;
      EXPECT_EQ(got.at(series + "_bucket{" + labels(path, status) + ",le=\"" + text + "\"}"), std::to_string(at_most))
          << path << " le=" << text;
    }
    EXPECT_EQ(got.at(series + "_bucket{" + labels(path, status) + ",le=\"+Inf\"}"), std::to_string(seen.size()));
    EXPECT_EQ(got.at(series + "_count{" + labels(path, status) + "}"), std::to_string(seen.size()));
    double sum = 0;
    for (double s : seen) sum += s;
    EXPECT_NEAR(std::stod(got.at(series + "_sum{" + labels(path, status) + "}")), sum, sum * 1e-5) << path;
  }
}

}  // namespace
}  // namespace trainfit::cli
