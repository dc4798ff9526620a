// SVG charts (docs/charts.md): a small chart layer (axes, linear and log scales, lines,
// dashed lines, markers, legend, stacked bar) and, on top of it, the seed's three charts
// of one Response. Pure text out: no I/O, no fonts or links, deterministic output.
//
// Every panel is 720 x 420 user units. Its plot area is a <g class="plot-area"> carrying
// the mapping from data to coordinates, in the panel's own coordinates:
//   data-left, data-right, data-top, data-bottom   the plot box
//   data-x-min, data-x-max, data-x-scale           linear | log (log10 between min and max)
//   data-y-min, data-y-max, data-y-scale           (bar charts have no y mapping)
// so that a reader (or a test) can turn any drawn coordinate back into its value.
#pragma once

#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"

namespace trainfit::plot {

// ---- The chart layer ----

constexpr int kPanelWidth = 720;
constexpr int kPanelHeight = 420;

enum class Scale { kLinear, kLog };

struct Axis {
  std::string label;  // with its unit: "per-GPU memory (GiB)"
  Scale scale = Scale::kLinear;
  double min = 0, max = 1;
  // Tick labels: "%g"-like numbers, or powers of two written 1K, 2K, ... (log axes of
  // GPU counts and tokens).
  bool binary_ticks = false;
};

struct Point {
  double x = 0, y = 0;
};

// A polyline; role is written as data-series (stable names tests and pages can select).
struct Line {
  std::string role, legend;
  std::vector<Point> points;
  std::string color;
  bool dashed = false;
};

// A shaded range between a lower and an upper value at each x (a likely range), drawn behind
// the lines as one closed polygon: the upper edge left to right, then the lower edge back.
// A band whose every span is empty (high <= low) is not drawn, nor put in the legend.
struct Span {
  double x = 0, low = 0, high = 0;
};
struct Band {
  std::string role, legend;
  std::vector<Span> spans;  // x increasing
  std::string color;
};

// A horizontal (y set) or vertical (x set) reference line across the plot area.
struct Rule {
  std::string role, legend, label;
  bool vertical = false;
  double at = 0;
  std::string color;
  bool dashed = true;
};

struct Marker {
  std::string role, legend, label;
  Point at;
  std::string color;
};

struct LineChart {
  std::string id;  // unique within a page: prefixes the clip path's id
  std::string title, subtitle;
  Axis x, y;
  std::vector<Band> bands;  // drawn first, under the lines
  std::vector<Line> lines;
  std::vector<Rule> rules;
  std::vector<Marker> markers;
};

struct Segment {
  std::string role, legend;
  double value = 0;
  std::string color;
};

// One horizontal stacked bar against a limit (a capacity), on a linear x axis from 0.
struct BarChart {
  std::string id;
  std::string title, subtitle;
  Axis x;
  std::vector<Segment> segments;
  double limit = 0;
  std::string limit_legend;
  std::string status;  // "53.0 GiB free" / "over by 12.3 GiB", written by the bar's end
  bool over = false;
};

// One panel: a <g class="panel"> group in panel coordinates (0..720, 0..420).
TRAINFIT_API std::string render_panel(const LineChart& chart);
TRAINFIT_API std::string render_panel(const BarChart& chart);

// A whole SVG document: the panels stacked top to bottom, panel i translated by
// (0, i * 420); title is the document's <title>.
TRAINFIT_API std::string svg_document(const std::vector<std::string>& panels, const std::string& title);

// Text for SVG/XML/HTML: & < > " ' escaped.
TRAINFIT_API std::string escape_xml(const std::string& text);

// ---- The response's three charts ----

enum class Chart { kGpus, kSeq, kBudget };

// "gpus" | "seq" | "budget" | "all" (the three, in that order); the error names `field`.
TRAINFIT_API Result<std::vector<Chart>> parse_charts(const std::string& name, const std::string& field = "chart");
TRAINFIT_API const char* to_string(Chart chart);

// (1) per-GPU memory vs GPU count (log x): activations dashed, model states, total with
//     its likely range as a band, capacity, the request's GPU count marked with its
//     headroom, min_gpus_to_fit.
TRAINFIT_API LineChart gpus_chart(const Response& response);
// (2) per-GPU memory vs sequence length (log x): total with its likely range as a band,
//     activations, capacity dashed, the request's sequence length marked.
TRAINFIT_API LineChart seq_chart(const Response& response);
// (3) the per-GPU budget: model states, activations, transients, overheads and the free
//     (or missing) HBM, as one stacked bar against the capacity.
TRAINFIT_API BarChart budget_chart(const Response& response);

// The charts as one SVG document (needs the profiles for gpus and seq).
TRAINFIT_API std::string response_svg(const Response& response, const std::vector<Chart>& charts);

}  // namespace trainfit::plot
