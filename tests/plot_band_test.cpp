// The likely range as a band on the two line charts (docs/charts.md): drawn from the
// profile's ranges, and not drawn at all where the answer has none (an older service's,
// read back with each point's range collapsed onto its figure).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "trainfit/json.h"
#include "trainfit/plot.h"
#include "trainfit/request.h"

namespace trainfit {
namespace {

using nlohmann::json;

Response response_of(const std::string& spec) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec).ok()) << spec;
  Result<Response> r = respond(request);
  EXPECT_TRUE(r.ok()) << spec;
  return r.ok() ? r.value() : Response{};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The same answer as a service that wrote no range into its profile points would give it.
Response without_point_ranges(const Response& r) {
  json j = json::parse(response_to_json(r, {"old-node", 1.0}, 0));
  for (const char* profile : {"mem_vs_gpus", "mem_vs_seq"}) {
    for (json& point : j["profile"][profile]) {
      point.erase("likely_low_gb");
      point.erase("likely_high_gb");
    }
  }
  Result<Response> read = response_from_json(j.dump());
  EXPECT_TRUE(read.ok());
  return read.ok() ? read.value() : Response{};
}

TEST(PlotBand, BothLineChartsShadeTheRangeOnceBehindTheTotal) {
  const Response r = response_of("model=llama3-8b,num_gpus=8,zero_stage=3");
  for (const std::string& svg : {plot::render_panel(plot::gpus_chart(r)), plot::render_panel(plot::seq_chart(r))}) {
    EXPECT_EQ(count(svg, "<polygon class=\"band\" data-series=\"likely-range\""), 1u);
    EXPECT_EQ(count(svg, ">likely range</text>"), 1u);  // its legend row
    EXPECT_LT(svg.find("data-series=\"likely-range\""), svg.find("data-series=\"total\""));  // drawn first: behind
  }
}

TEST(PlotBand, AnAnswerWithoutRangesDrawsNoBand) {
  const Response r = without_point_ranges(response_of("model=llama3-70b,num_gpus=8,zero_stage=3,seq_length=8192"));
  ASSERT_FALSE(r.mem_vs_gpus.empty());
  for (const std::string& svg : {plot::render_panel(plot::gpus_chart(r)), plot::render_panel(plot::seq_chart(r))}) {
    EXPECT_EQ(count(svg, "<polygon"), 0u);
    EXPECT_EQ(count(svg, "likely range"), 0u);
    EXPECT_EQ(count(svg, "data-series=\"total\""), 1u);  // the rest is drawn as ever
  }
}

// The chart layer: a band all of whose spans are empty is left out; one with any width is a
// polygon of both edges (2 points a span).
TEST(PlotBand, AnEmptyBandIsLeftOutAndAnyWidthIsDrawn) {
  plot::LineChart chart;
  chart.id = "t";
  chart.x = {"x", plot::Scale::kLinear, 0, 10, false};
  chart.y = {"y", plot::Scale::kLinear, 0, 10, false};
  plot::Band band;
  band.role = "range";
  band.legend = "the range";
  band.color = "#123456";
  band.spans = {{1, 5, 5}, {2, 6, 6}, {3, 7, 7}};
  chart.bands = {band};
  std::string svg = plot::render_panel(chart);
  EXPECT_EQ(count(svg, "<polygon"), 0u);
  EXPECT_EQ(count(svg, "the range"), 0u);

  chart.bands[0].spans[1] = {2, 5, 7};
  svg = plot::render_panel(chart);
  ASSERT_EQ(count(svg, "<polygon"), 1u);
  EXPECT_EQ(count(svg, ">the range</text>"), 1u);
  const size_t points = svg.find("points=\"", svg.find("<polygon")) + 8;
  const std::string list = svg.substr(points, svg.find('"', points) - points);
  EXPECT_EQ(count(list, ","), 6u) << list;
}

}  // namespace
}  // namespace trainfit
