// The likely range beside every figure: each job gets its class's factors from
// conf/likely_range.json (read here on its own, not through the library's table), in every face.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "trainfit/config.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"
#include "trainfit/util/text.h"

namespace trainfit {
namespace {

nlohmann::json range_file() {
  std::ifstream in(std::string(TRAINFIT_CONF_DIR) + "/likely_range.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// The file's rule, written out: the first listed class whose adapter and sharding match ("any" matches all).
std::pair<double, double> expected_factors(bool adapter, bool sharded) {
  const nlohmann::json file = range_file();  // kept: a loop over a temporary's member would dangle
  for (const nlohmann::json& c : file["classes"]) {
    const std::string a = c["adapter"];
    const bool adapter_ok = a == "any" || a == (adapter ? "adapter" : "full");
    const bool sharded_ok = c["sharded"].is_string() || c["sharded"].get<bool>() == sharded;
    if (adapter_ok && sharded_ok) return {c["low"].get<double>(), c["high"].get<double>()};
  }
  ADD_FAILURE() << "no class in conf/likely_range.json matches";
  return {1, 1};
}

Breakdown estimated(const char* model, int64_t gpus, int64_t zero, const char* adapter) {
  Request r;
  r.model = model;
  r.num_gpus = gpus;
  r.zero_stage = zero;
  r.adapter = adapter;
  Result<Resolved> resolved = resolve(r);
  EXPECT_TRUE(resolved.ok()) << resolved.error().message;
  return estimate(resolved->config);
}

TEST(LikelyRange, EachJobGetsItsClassFactors) {
  struct Case {
    const char* adapter;
    int64_t gpus, zero;
    bool is_adapter, sharded;
  } cases[] = {{"none", 1, 0, false, false}, {"none", 8, 3, false, true}, {"lora", 1, 0, true, false},
               {"qlora", 8, 3, true, true}, {"lora", 8, 0, true, false}};
  for (const Case& c : cases) {
    const Breakdown b = estimated("llama3-8b", c.gpus, c.zero, c.adapter);
    const auto [low, high] = expected_factors(c.is_adapter, c.sharded);
    EXPECT_DOUBLE_EQ(b.likely_low, b.per_gpu_total * low) << c.adapter << " on " << c.gpus << ", zero " << c.zero;
    EXPECT_DOUBLE_EQ(b.likely_high, b.per_gpu_total * high) << c.adapter << " on " << c.gpus << ", zero " << c.zero;
    ASSERT_NE(b.range, nullptr);
  }
}

TEST(LikelyRange, TheFileHoldsNinetyPercentLeaveOneSourceOut) {
  const nlohmann::json file = range_file();
  EXPECT_GE(file["leave_one_source_out_coverage"].get<double>(), 0.90);
  for (const nlohmann::json& c : file["classes"]) {
    EXPECT_LT(c["low"].get<double>(), c["high"].get<double>());
    EXPECT_GT(c["low"].get<double>(), 0.0);
  }
  EXPECT_EQ(file["classes"].back()["adapter"], "any");  // a pooled class: every job has a range
}

TEST(LikelyRange, JsonAndTextStateIt) {
  Request r;
  r.model = "llama3-8b";
  r.num_gpus = 8;
  r.zero_stage = 3;
  Result<Response> response = respond(r, {});
  ASSERT_TRUE(response.ok());
  const nlohmann::json j = nlohmann::json::parse(response_to_json(*response, {}, 0));
  const auto [low, high] = expected_factors(false, true);
  const double total = j["per_gpu_total_gb"].get<double>();
  EXPECT_NEAR(j["likely_low_gb"].get<double>(), total * low, 1e-3);
  EXPECT_NEAR(j["likely_high_gb"].get<double>(), total * high, 1e-3);
  EXPECT_EQ(j["likely_range"]["sharded"], "sharded");
  const std::string line = needs_line(response->resolved.config, response->breakdown);
  EXPECT_NE(line.find("GiB per GPU (likely " + format_gib(response->breakdown.likely_low) + " to " +
                      format_gib(response->breakdown.likely_high) + ") on 8 x "),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace trainfit
