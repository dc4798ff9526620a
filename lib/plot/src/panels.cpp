// One panel of the chart layer: title, plot area with its data-* mapping, axes with
// ticks and labelled units, the drawn series, and a legend column on the right.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "svg.h"
#include "trainfit/util/utf8.h"

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

// A band's fill: light enough that the lines and the grid show through it.
const char* const kBandOpacity = "0.18";

// One legend row: a swatch ("line", "dashed", "dot", "box", "band") and its text.
class Legend {
 public:
  void add(const std::string& swatch, const std::string& color, const std::string& label) {
    if (label.empty()) return;
    const double y = kTop + 8 + 22 * rows_++;
    const std::string sy = num(y);
    out_ += "<g class=\"legend-entry\">";
    if (swatch == "dot") {
      out_ += "<circle cx=\"" + num(kLegendX + 12) + "\" cy=\"" + sy + "\" r=\"5\" fill=\"" + color + "\"/>";
    } else if (swatch == "band") {
      out_ += "<rect x=\"" + num(kLegendX) + "\" y=\"" + num(y - 6) + "\" width=\"24\" height=\"12\" fill=\"" + color +
              "\" fill-opacity=\"" + kBandOpacity + "\"/>";
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

// ---- Labels placed clear of each other and of the lines they annotate ----

// A box in the panel's coordinates.
struct Box {
  double left, top, right, bottom;
};

bool hits(const Box& a, const Box& b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

double overlap(const Box& a, const Box& b) {
  return std::max(0.0, std::min(a.right, b.right) - std::max(a.left, b.left)) *
         std::max(0.0, std::min(a.bottom, b.bottom) - std::max(a.top, b.top));
}

bool inside(const Box& a, const Box& area) {
  return a.left >= area.left && a.right <= area.right && a.top >= area.top && a.bottom <= area.bottom;
}

// The drawn width of text, estimated generously (DejaVu Sans: digits 0.64 em, bold 0.7 em;
// narrower fallback fonts only leave more room).
double text_width(const std::string& s, double font, bool bold) {
  size_t chars = 0;
  for (char ch : s) chars += !is_utf8_continuation(static_cast<unsigned char>(ch));  // UTF-8 code points
  return static_cast<double>(chars) * font * (bold ? 0.70 : 0.64);
}

// Text of one or more lines at an anchor point; y is the first line's baseline.
struct Label {
  std::vector<std::string> lines;
  double font = detail::kFont;
  bool bold = false;
  double x = 0, y = 0;
  std::string anchor = "start";  // start | middle | end

  double pitch() const { return 1.2 * font; }
  double width() const {
    double w = 0;
    for (const std::string& l : lines) w = std::max(w, text_width(l, font, bold));
    return w;
  }
  double height() const { return 1.2 * font + pitch() * static_cast<double>(lines.size() - 1); }
  // The em box, as a browser measures text (ascent 0.95 em, descent 0.25 em), 2 px around.
  Box box() const {
    const double w = width();
    const double left = anchor == "start" ? x : anchor == "end" ? x - w : x - w / 2;
    return {left - 2, y - 0.95 * font - 2, left + w + 2, y + pitch() * static_cast<double>(lines.size() - 1) + 0.25 * font + 2};
  }
  // Moved so that its box's top (or bottom) is at `edge`.
  Label top_at(double edge) const {
    Label l = *this;
    l.y = edge + 0.95 * font + 2;
    return l;
  }
  Label bottom_at(double edge) const {
    Label l = *this;
    l.y = edge - pitch() * static_cast<double>(lines.size() - 1) - 0.25 * font - 2;
    return l;
  }
  Label at_x(double px, const char* a) const {
    Label l = *this;
    l.x = px;
    l.anchor = a;
    return l;
  }
  std::string svg(const std::string& attributes) const {
    const std::string open = "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" +
                             (font != detail::kFont ? " font-size=\"" + fixed(font, 0) + "\"" : "") +
                             (bold ? " font-weight=\"bold\"" : "") + attributes + ">";
    if (lines.size() == 1) return open + escape_xml(lines[0]) + "</text>\n";
    std::string out = open;
    for (size_t i = 0; i < lines.size(); ++i) {
      out += "<tspan x=\"" + num(x) + "\" y=\"" + num(y + pitch() * static_cast<double>(i)) + "\">" + escape_xml(lines[i]) +
             "</tspan>";
    }
    return out + "</text>\n";
  }
};

// Takes the first candidate that stays in the area and touches nothing placed or blocked
// before it; when every one touches something, the one that touches least.
class Placer {
 public:
  explicit Placer(Box area) : area_(area) {}
  void block(const Box& b) { taken_.push_back(b); }
  // A line's box, widened by half its stroke and a pixel.
  void block_line(double x1, double y1, double x2, double y2, double stroke) {
    const double pad = stroke / 2 + 1;
    block({std::min(x1, x2) - pad, std::min(y1, y2) - pad, std::max(x1, x2) + pad, std::max(y1, y2) + pad});
  }
  std::optional<Label> place(const std::vector<Label>& candidates, bool required = true) {
    const Label* best = nullptr;
    double best_cost = 0;
    for (const Label& c : candidates) {
      const Box b = c.box();
      if (!inside(b, area_)) continue;
      double cost = 0;
      for (const Box& t : taken_) cost += overlap(b, t);
      if (best == nullptr || cost < best_cost) {
        best = &c;
        best_cost = cost;
      }
      if (cost == 0) break;
    }
    if (best == nullptr || (best_cost > 0 && !required)) return std::nullopt;
    taken_.push_back(best->box());
    return *best;
  }

 private:
  Box area_;
  std::vector<Box> taken_;
};

// A label about a point: above it, below it, beside it, in one line or broken after its
// last ", " into two, nearest first.
std::vector<Label> around_point(const Label& base, double cx, double cy, double gap) {
  std::vector<Label> layouts = {base};
  const std::string& whole = base.lines[0];
  const size_t comma = whole.rfind(", ");
  if (base.lines.size() == 1 && comma != std::string::npos) {
    Label two = base;
    two.lines = {whole.substr(0, comma + 1), whole.substr(comma + 2)};
    layouts.push_back(two);
  }
  std::vector<Label> out;
  for (double extra : {0.0, 18.0, 36.0, 60.0}) {
    for (const Label& l : layouts) {
      for (const Label& v : {l.bottom_at(cy - gap - extra), l.top_at(cy + gap + extra)}) {
        out.push_back(v.at_x(cx + gap, "start"));
        out.push_back(v.at_x(cx - gap, "end"));
        out.push_back(v.at_x(cx, "middle"));
        out.push_back(v.at_x(kLeft + 4, "start"));
        out.push_back(v.at_x(kRight - 4, "end"));
      }
      if (extra == 0) {  // beside the point, centred on it
        Label mid = l.top_at(cy - l.height() / 2 - 2);
        out.push_back(mid.at_x(cx + gap + 2, "start"));
        out.push_back(mid.at_x(cx - gap - 2, "end"));
      }
    }
  }
  return out;
}

// A horizontal rule's label: just above or below the line, from its right end leftwards.
std::vector<Label> along_horizontal(const Label& base, double py) {
  std::vector<Label> out;
  for (int i = 0; i <= 8; ++i) {
    const double x = kRight - 6 - i * (kRight - kLeft - 12) / 8;
    out.push_back(base.bottom_at(py - 2).at_x(x, "end"));
    out.push_back(base.top_at(py + 2).at_x(x, "end"));
  }
  return out;
}

// A label on either side of x = px, gap away: the side with more room (the plot's other half) first.
void beside(const Label& l, double px, double gap, bool right_half, std::vector<Label>& out) {
  const Label left = l.at_x(px - gap, "end"), right = l.at_x(px + gap, "start");
  out.push_back(right_half ? left : right);
  out.push_back(right_half ? right : left);
}

// A vertical rule's label: beside the line (the side with more room first), from the top down.
std::vector<Label> along_vertical(const Label& base, double px) {
  const bool right_half = px > (kLeft + kRight) / 2;
  std::vector<Label> out;
  for (double y = kTop + 15; y < kBottom; y += 18) {
    Label at = base;
    at.y = y;
    beside(at, px, 5, right_half, out);
  }
  return out;
}

Label label_of(const std::string& text, bool bold = false) {
  Label l;
  l.lines = {text};
  l.bold = bold;
  return l;
}

// The band as a polygon, or nothing when no span has any width (an answer without ranges).
std::string band(const Band& b, const Mapping& x, const Mapping& y) {
  const bool empty = std::none_of(b.spans.begin(), b.spans.end(), [](const Span& s) { return s.high > s.low; });
  if (empty) return "";
  std::string points;
  for (const Span& s : b.spans) points += (points.empty() ? "" : " ") + num(x(s.x)) + "," + num(y(s.high));
  for (auto s = b.spans.rbegin(); s != b.spans.rend(); ++s) points += " " + num(x(s->x)) + "," + num(y(s->low));
  return "<polygon class=\"band\" data-series=\"" + escape_xml(b.role) + "\" fill=\"" + b.color + "\" fill-opacity=\"" +
         kBandOpacity + "\" stroke=\"none\" points=\"" + points + "\"/>\n";
}

std::string rule(const Rule& r, const Mapping& x, const Mapping& y) {
  if (r.vertical) {
    const double px = x(r.at);
    return "<line class=\"rule\" data-series=\"" + escape_xml(r.role) + "\" x1=\"" + num(px) + "\" y1=\"" + num(kTop) +
           "\" x2=\"" + num(px) + "\" y2=\"" + num(kBottom) + "\" stroke=\"" + r.color + "\" stroke-width=\"1.5\"" +
           dash(r.dashed) + "/>\n";
  }
  const double py = y(r.at);
  return "<line class=\"rule\" data-series=\"" + escape_xml(r.role) + "\" x1=\"" + num(kLeft) + "\" y1=\"" + num(py) +
         "\" x2=\"" + num(kRight) + "\" y2=\"" + num(py) + "\" stroke=\"" + r.color + "\" stroke-width=\"2\"" +
         dash(r.dashed) + "/>\n";
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
  std::vector<const Band*> drawn_bands;  // in the legend after the lines they surround
  for (const Band& b : c.bands) {
    const std::string svg = band(b, x, y);
    if (svg.empty()) continue;
    out += svg;
    drawn_bands.push_back(&b);
  }
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
  for (const Band* b : drawn_bands) legend.add("band", b->color, b->legend);
  // Labels stay inside the plot box (clear of the ticks, axis labels and legend) and off
  // the reference lines and dots; the markers' labels are placed first.
  Placer placer({kLeft + 1, kTop + 1, kRight - 1, kBottom - 1});
  for (const Rule& r : c.rules) {
    out += rule(r, x, y);
    if (r.vertical) placer.block_line(x(r.at), kTop, x(r.at), kBottom, 1.5);
    else placer.block_line(kLeft, y(r.at), kRight, y(r.at), 2);
    legend.add(r.dashed ? "dashed" : "line", r.color, r.legend);
  }
  out += "</g>\n";
  for (const Marker& m : c.markers) {
    const double cx = x(m.at.x), cy = y(m.at.y);
    out += "<circle class=\"marker\" data-marker=\"" + escape_xml(m.role) + "\" cx=\"" + num(cx) + "\" cy=\"" + num(cy) +
           "\" r=\"6\" fill=\"" + m.color + "\" stroke=\"#ffffff\" stroke-width=\"2\"/>\n";
    placer.block({cx - 7, cy - 7, cx + 7, cy + 7});
    legend.add("dot", m.color, m.legend);
  }
  for (const Marker& m : c.markers) {
    if (m.label.empty()) continue;
    if (auto l = placer.place(around_point(label_of(m.label, true), x(m.at.x), y(m.at.y), 9))) {
      out += l->svg(" class=\"marker-label\" fill=\"#111111\"" + std::string(kHalo));
    }
  }
  for (const Rule& r : c.rules) {
    if (r.label.empty()) continue;
    const Label base = label_of(r.label);
    if (auto l = placer.place(r.vertical ? along_vertical(base, x(r.at)) : along_horizontal(base, y(r.at)))) {
      out += l->svg(" class=\"rule-label\" fill=\"" + r.color + "\"" + kHalo);
    }
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
  struct Share {
    double x0, x1;
    std::string text, color;
  };
  std::vector<Share> shares;
  double at = 0;
  for (const Segment& s : c.segments) {
    const double x0 = x(at), x1 = x(at + s.value);
    out += "<rect class=\"segment\" data-series=\"" + escape_xml(s.role) + "\" x=\"" + num(x0) + "\" y=\"" + num(bar_top) +
           "\" width=\"" + num(std::max(0.0, x1 - x0)) + "\" height=\"" + num(bar_height) + "\" fill=\"" + s.color +
           "\"" + (s.role == "free" ? " stroke=\"#9a9a9a\" stroke-dasharray=\"4 3\"" : " stroke=\"#ffffff\" stroke-width=\"1\"") +
           "/>\n";
    if (x1 - x0 >= 44 && c.limit > 0) {
      shares.push_back({x0, x1, fixed(100.0 * s.value / c.limit, 0) + "%", s.role == "free" ? "#444444" : "#ffffff"});
    }
    legend.add("box", s.color, s.legend);
    at += s.value;
  }
  const double limit_px = x(c.limit);
  out += "<line class=\"rule\" data-series=\"capacity\" x1=\"" + num(limit_px) + "\" y1=\"" + num(kTop) + "\" x2=\"" +
         num(limit_px) + "\" y2=\"" + num(kBottom) + "\" stroke=\"#c0392b\" stroke-width=\"2\"" + dash(true) + "/>\n";
  legend.add("dashed", "#c0392b", c.limit_legend);
  Placer placer({kLeft + 1, kTop + 1, kRight - 1, kBottom - 1});
  placer.block_line(limit_px, kTop, limit_px, kBottom, 2);
  const double end_px = x(at);
  const double over_y = bar_top + bar_height + 16;
  if (c.over) {
    out += "<line class=\"over\" x1=\"" + num(limit_px) + "\" y1=\"" + num(over_y) + "\" x2=\"" + num(end_px) + "\" y2=\"" +
           num(over_y) + "\" stroke=\"#c0392b\" stroke-width=\"3\"/>\n";
    placer.block_line(limit_px, over_y, end_px, over_y, 3);
  }
  // The share of the limit, inside its segment when it fits there clear of the capacity line.
  for (const Share& sh : shares) {
    Label base = label_of(sh.text, true);
    base.y = bar_top + bar_height / 2 + 4;
    std::vector<Label> candidates;
    for (const Label& l : {base.at_x((sh.x0 + sh.x1) / 2, "middle"), base.at_x(sh.x0 + 4, "start"),
                           base.at_x(sh.x1 - 4, "end"), base.at_x(limit_px - 4, "end"), base.at_x(limit_px + 4, "start")}) {
      const Box b = l.box();
      if (b.left >= sh.x0 && b.right <= sh.x1) candidates.push_back(l);
    }
    if (auto l = placer.place(candidates, false)) out += l->svg(" fill=\"" + sh.color + "\"");
  }
  // The status above the bar by its end (or by the capacity line), else below it.
  const bool right_half = std::max(end_px, limit_px) > (kLeft + kRight) / 2;
  const double edge = c.over ? end_px : limit_px;
  Label status = label_of(c.status, true);
  std::vector<Label> candidates;
  for (const Label& l : {status.bottom_at(bar_top - 8), status.top_at(over_y + 6)}) {
    beside(l, edge, 6, right_half, candidates);
    for (double px : {end_px, limit_px}) {
      candidates.push_back(l.at_x(px - 6, "end"));
      candidates.push_back(l.at_x(px + 6, "start"));
    }
    candidates.push_back(l.at_x(kRight - 6, "end"));
    candidates.push_back(l.at_x(kLeft + 6, "start"));
  }
  if (auto l = placer.place(candidates)) {
    out += l->svg(std::string(" class=\"status\" fill=\"") + (c.over ? "#c0392b" : "#1e7b34") + "\"");
  }
  out += "</g>\n";
  out += legend.svg();
  out += "</g>\n";
  return out;
}

}  // namespace trainfit::plot
