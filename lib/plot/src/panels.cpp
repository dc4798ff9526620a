// One panel of the chart layer: title, plot area with its data-* mapping, axes with
// ticks and labelled units, the drawn series, and a legend column on the right.
#include <algorithm>
#include <string>

#include "svg.h"

namespace trainfit::plot {
namespace {

using detail::fixed;
using detail::kBottom;
using detail::kLeft;
using detail::kLegendX;
using detail::kRight;
using detail::kTop;
using detail::Mapping;

std::string num(double pixel) { return fixed(pixel, 2); }

// The mapping's attributes, as documented in plot.h.
std::string axis_attributes(const char* name, const Axis& axis) {
  return std::string(" data-") + name + "-min=\"" + fixed(axis.min, 6) + "\" data-" + name + "-max=\"" +
         fixed(axis.max, 6) + "\" data-" + name + "-scale=\"" + (axis.scale == Scale::kLog ? "log" : "linear") + "\"";
}

std::string box_attributes() {
  return " data-left=\"" + num(kLeft) + "\" data-right=\"" + num(kRight) + "\" data-top=\"" + num(kTop) +
         "\" data-bottom=\"" + num(kBottom) + "\"";
}

std::string dash(bool dashed) { return dashed ? " stroke-dasharray=\"7 5\"" : ""; }

std::string text(double x, double y, const std::string& content, const std::string& attributes = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + attributes + ">" + escape_xml(content) + "</text>\n";
}

// White halo behind labels drawn over lines.
const char* const kHalo = " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"";

std::string header(const std::string& id, const std::string& title, const std::string& subtitle) {
  std::string out = "<g class=\"panel\" data-chart=\"" + escape_xml(id) + "\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(kPanelWidth) + "\" height=\"" +
         std::to_string(kPanelHeight) + "\" fill=\"#ffffff\"/>\n";
  out += text(16, 26, title, " font-size=\"" + std::to_string(detail::kTitleFont) + "\" font-weight=\"bold\" fill=\"#111111\"");
  out += text(16, 46, subtitle, " fill=\"#444444\"");
  return out;
}

std::string x_axis(const Axis& axis, const Mapping& x, bool grid) {
  std::string out;
  for (const detail::Tick& t : detail::ticks(axis)) {
    const std::string px = num(x(t.value));
    if (grid) {
      out += "<line x1=\"" + px + "\" y1=\"" + num(kTop) + "\" x2=\"" + px + "\" y2=\"" + num(kBottom) +
             "\" stroke=\"#e4e4e4\"/>\n";
    }
    out += "<line x1=\"" + px + "\" y1=\"" + num(kBottom) + "\" x2=\"" + px + "\" y2=\"" + num(kBottom + 5) +
           "\" stroke=\"#555555\"/>\n";
    out += text(x(t.value), kBottom + 19, t.label,
                " class=\"tick\" text-anchor=\"middle\" font-size=\"" + std::to_string(detail::kTickFont) + "\" fill=\"#333333\"");
  }
  out += text((kLeft + kRight) / 2, kBottom + 42, axis.label, " class=\"axis-label\" text-anchor=\"middle\" fill=\"#111111\"");
  return out;
}

std::string y_axis(const Axis& axis, const Mapping& y) {
  std::string out;
  for (const detail::Tick& t : detail::ticks(axis)) {
    const std::string py = num(y(t.value));
    out += "<line x1=\"" + num(kLeft) + "\" y1=\"" + py + "\" x2=\"" + num(kRight) + "\" y2=\"" + py +
           "\" stroke=\"#e4e4e4\"/>\n";
    out += text(kLeft - 7, y(t.value) + 4, t.label,
                " class=\"tick\" text-anchor=\"end\" font-size=\"" + std::to_string(detail::kTickFont) + "\" fill=\"#333333\"");
  }
  out += "<text class=\"axis-label\" transform=\"translate(22," + num((kTop + kBottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" fill=\"#111111\">" + escape_xml(axis.label) + "</text>\n";
  return out;
}

std::string frame() {
  return "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kRight - kLeft) + "\" height=\"" +
         num(kBottom - kTop) + "\" fill=\"none\" stroke=\"#888888\"/>\n";
}

// One legend row: a swatch ("line", "dashed", "dot", "box") and its text.
class Legend {
 public:
  void add(const std::string& swatch, const std::string& color, const std::string& label) {
    if (label.empty()) return;
    const double y = kTop + 8 + 22 * rows_++;
    const std::string sy = num(y);
    out_ += "<g class=\"legend-entry\">";
    if (swatch == "dot") {
      out_ += "<circle cx=\"" + num(kLegendX + 12) + "\" cy=\"" + sy + "\" r=\"5\" fill=\"" + color + "\"/>";
    } else if (swatch == "box") {
      out_ += "<rect x=\"" + num(kLegendX + 2) + "\" y=\"" + num(y - 7) + "\" width=\"20\" height=\"14\" fill=\"" + color +
              "\" stroke=\"#666666\" stroke-width=\"0.5\"/>";
    } else {
      out_ += "<line x1=\"" + num(kLegendX) + "\" y1=\"" + sy + "\" x2=\"" + num(kLegendX + 24) + "\" y2=\"" + sy +
              "\" stroke=\"" + color + "\" stroke-width=\"2.5\"" + dash(swatch == "dashed") + "/>";
    }
    out_ += text(kLegendX + 30, y + 4, label, " fill=\"#222222\"");
    out_ += "</g>\n";
  }
  std::string svg() const { return "<g class=\"legend\">\n" + out_ + "</g>\n"; }

 private:
  std::string out_;
  int rows_ = 0;
};

// Right of the marker when the label fits there, else left of it, else against the box's
// left edge (7 px a character: bold 12 px text, generously).
std::string marker_label(const Marker& m, double cx, double cy) {
  const double width = 7.0 * static_cast<double>(m.label.size());
  const double ly = cy - 12 < kTop + 14 ? cy + 22 : cy - 12;
  double x = cx + 9;
  const char* anchor = "start";
  if (x + width > kRight) {
    x = cx - 9;
    anchor = "end";
    if (x - width < kLeft) {
      x = kLeft + 4;
      anchor = "start";
    }
  }
  return text(x, ly, m.label, std::string(" class=\"marker-label\" text-anchor=\"") + anchor +
                                  "\" font-weight=\"bold\" fill=\"#111111\"" + kHalo);
}

std::string rule(const Rule& r, const Mapping& x, const Mapping& y) {
  std::string out;
  if (r.vertical) {
    const double px = x(r.at);
    out += "<line class=\"rule\" data-series=\"" + escape_xml(r.role) + "\" x1=\"" + num(px) + "\" y1=\"" + num(kTop) +
           "\" x2=\"" + num(px) + "\" y2=\"" + num(kBottom) + "\" stroke=\"" + r.color + "\" stroke-width=\"1.5\"" +
           dash(r.dashed) + "/>\n";
    if (!r.label.empty()) {
      const bool right_half = px > (kLeft + kRight) / 2;
      out += text(right_half ? px - 5 : px + 5, kTop + 15, r.label,
                  std::string(" text-anchor=\"") + (right_half ? "end" : "start") + "\" fill=\"" + r.color + "\"" + kHalo);
    }
  } else {
    const double py = y(r.at);
    out += "<line class=\"rule\" data-series=\"" + escape_xml(r.role) + "\" x1=\"" + num(kLeft) + "\" y1=\"" + num(py) +
           "\" x2=\"" + num(kRight) + "\" y2=\"" + num(py) + "\" stroke=\"" + r.color + "\" stroke-width=\"2\"" +
           dash(r.dashed) + "/>\n";
    if (!r.label.empty()) {
      out += text(kRight - 6, py - 6, r.label, " text-anchor=\"end\" fill=\"" + r.color + "\"" + std::string(kHalo));
    }
  }
  return out;
}

}  // namespace

std::string render_panel(const LineChart& c) {
  const Mapping x(c.x, kLeft, kRight), y(c.y, kBottom, kTop);
  const std::string clip = escape_xml(c.id) + "-clip";
  std::string out = header(c.id, c.title, c.subtitle);
  out += "<defs><clipPath id=\"" + clip + "\"><rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" +
         num(kRight - kLeft) + "\" height=\"" + num(kBottom - kTop) + "\"/></clipPath></defs>\n";
  out += "<g class=\"plot-area\"" + box_attributes() + axis_attributes("x", c.x) + axis_attributes("y", c.y) + ">\n";
  out += y_axis(c.y, y);
  out += x_axis(c.x, x, true);
  out += frame();
  Legend legend;
  out += "<g clip-path=\"url(#" + clip + ")\">\n";
  for (const Line& line : c.lines) {
    out += "<polyline class=\"series\" data-series=\"" + escape_xml(line.role) + "\" fill=\"none\" stroke=\"" + line.color +
           "\" stroke-width=\"2.5\" stroke-linejoin=\"round\"" + dash(line.dashed) + " points=\"";
    for (size_t i = 0; i < line.points.size(); ++i) {
      if (i) out += ' ';
      out += num(x(line.points[i].x)) + "," + num(y(line.points[i].y));
    }
    out += "\"/>\n";
    legend.add(line.dashed ? "dashed" : "line", line.color, line.legend);
  }
  for (const Rule& r : c.rules) {
    out += rule(r, x, y);
    legend.add(r.dashed ? "dashed" : "line", r.color, r.legend);
  }
  out += "</g>\n";
  for (const Marker& m : c.markers) {
    const double cx = x(m.at.x), cy = y(m.at.y);
    out += "<circle class=\"marker\" data-marker=\"" + escape_xml(m.role) + "\" cx=\"" + num(cx) + "\" cy=\"" + num(cy) +
           "\" r=\"6\" fill=\"" + m.color + "\" stroke=\"#ffffff\" stroke-width=\"2\"/>\n";
    out += marker_label(m, cx, cy);
    legend.add("dot", m.color, m.legend);
  }
  out += "</g>\n";
  out += legend.svg();
  out += "</g>\n";
  return out;
}

std::string render_panel(const BarChart& c) {
  const Mapping x(c.x, kLeft, kRight);
  const double bar_top = kTop + 96, bar_height = 72;
  std::string out = header(c.id, c.title, c.subtitle);
  out += "<g class=\"plot-area\"" + box_attributes() + axis_attributes("x", c.x) + " data-bar-top=\"" + num(bar_top) +
         "\" data-bar-height=\"" + num(bar_height) + "\">\n";
  out += x_axis(c.x, x, true);
  out += frame();
  Legend legend;
  double at = 0;
  for (const Segment& s : c.segments) {
    const double x0 = x(at), x1 = x(at + s.value);
    out += "<rect class=\"segment\" data-series=\"" + escape_xml(s.role) + "\" x=\"" + num(x0) + "\" y=\"" + num(bar_top) +
           "\" width=\"" + num(std::max(0.0, x1 - x0)) + "\" height=\"" + num(bar_height) + "\" fill=\"" + s.color +
           "\"" + (s.role == "free" ? " stroke=\"#9a9a9a\" stroke-dasharray=\"4 3\"" : " stroke=\"#ffffff\" stroke-width=\"1\"") +
           "/>\n";
    if (x1 - x0 >= 44 && c.limit > 0) {  // the share of the limit, written inside when it fits
      out += text((x0 + x1) / 2, bar_top + bar_height / 2 + 4, fixed(100.0 * s.value / c.limit, 0) + "%",
                  std::string(" text-anchor=\"middle\" font-weight=\"bold\" fill=\"") +
                      (s.role == "free" ? "#444444" : "#ffffff") + "\"");
    }
    legend.add("box", s.color, s.legend);
    at += s.value;
  }
  const double limit_px = x(c.limit);
  out += "<line class=\"rule\" data-series=\"capacity\" x1=\"" + num(limit_px) + "\" y1=\"" + num(kTop) + "\" x2=\"" +
         num(limit_px) + "\" y2=\"" + num(kBottom) + "\" stroke=\"#c0392b\" stroke-width=\"2\"" + dash(true) + "/>\n";
  legend.add("dashed", "#c0392b", c.limit_legend);
  const double end_px = x(at);
  if (c.over) {
    const double y = bar_top + bar_height + 16;
    out += "<line class=\"over\" x1=\"" + num(limit_px) + "\" y1=\"" + num(y) + "\" x2=\"" + num(end_px) + "\" y2=\"" +
           num(y) + "\" stroke=\"#c0392b\" stroke-width=\"3\"/>\n";
  }
  const bool right_half = std::max(end_px, limit_px) > (kLeft + kRight) / 2;
  const double status_x = c.over ? (right_half ? end_px : end_px + 6) : (right_half ? limit_px : limit_px + 6);
  out += text(status_x, bar_top - 14, c.status,
              std::string(" class=\"status\" text-anchor=\"") + (right_half ? "end" : "start") + "\" font-weight=\"bold\" fill=\"" +
                  (c.over ? "#c0392b" : "#1e7b34") + "\"");
  out += "</g>\n";
  out += legend.svg();
  out += "</g>\n";
  return out;
}

}  // namespace trainfit::plot
