// The chart layer: scales, ticks, escaping and the SVG document around the panels.
#include "svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainfit::plot {
namespace detail {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string out = text;
  if (out[0] == '-' && out.find_first_not_of("-0.") == std::string::npos) out.erase(0, 1);  // "-0.00"
  return out;
}

Mapping::Mapping(const Axis& axis, double from, double to)
    : log_(axis.scale == Scale::kLog),
      lo_(log_ ? std::log10(axis.min) : axis.min),
      hi_(log_ ? std::log10(axis.max) : axis.max),
      from_(from),
      to_(to) {}

double Mapping::operator()(double value) const {
  const double v = log_ ? std::log10(std::max(value, 1e-300)) : value;
  const double span = hi_ - lo_;
  return from_ + (span == 0 ? 0.0 : (v - lo_) / span) * (to_ - from_);
}

std::string binary_label(double value) {
  const double k = 1024.0;
  if (value >= k * k && std::fmod(value, k * k) == 0) return fixed(value / (k * k), 0) + "M";
  if (value >= k && std::fmod(value, k) == 0) return fixed(value / k, 0) + "K";
  return fixed(value, 0);
}

double nice_ceiling(double value) {
  if (!(value > 0)) return 1;
  const double decade = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * decade >= value * (1 - 1e-12)) return m * decade;
  }
  return 10 * decade;
}

namespace {

std::vector<Tick> linear_ticks(const Axis& axis) {
  const double step = nice_ceiling((axis.max - axis.min) / 6.0);
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  std::vector<Tick> out;
  for (double v = std::ceil(axis.min / step - 1e-9) * step; v <= axis.max * (1 + 1e-9) + 1e-12; v += step) {
    out.push_back({v, fixed(v, decimals)});
    if (out.size() > 20) break;
  }
  return out;
}

std::vector<Tick> log_ticks(const Axis& axis) {
  const double base = axis.binary_ticks ? 2.0 : 10.0;
  const int first = static_cast<int>(std::ceil(std::log(axis.min) / std::log(base) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log(axis.max) / std::log(base) + 1e-9));
  const int count = std::max(1, last - first + 1);
  const int stride = (count + 8) / 9;  // at most 9 labels
  std::vector<Tick> out;
  for (int e = first; e <= last; ++e) {
    if ((e - first) % stride != 0) continue;
    const double v = std::pow(base, e);
    out.push_back({v, axis.binary_ticks ? binary_label(v) : fixed(v, e < 0 ? -e : 0)});
  }
  return out;
}

}  // namespace

std::vector<Tick> ticks(const Axis& axis) {
  return axis.scale == Scale::kLog ? log_ticks(axis) : linear_ticks(axis);
}

}  // namespace detail

std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 (tab and newlines are).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string svg_document(const std::vector<std::string>& panels, const std::string& title) {
  const int height = kPanelHeight * static_cast<int>(std::max<size_t>(1, panels.size()));
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + std::to_string(kPanelWidth) + " " +
         std::to_string(height) + "\" width=\"" + std::to_string(kPanelWidth) + "\" height=\"" + std::to_string(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"" + std::to_string(detail::kFont) +
         "\" role=\"img\">\n";
  out += "<title>" + escape_xml(title) + "</title>\n";
  for (size_t i = 0; i < panels.size(); ++i) {
    out += "<g transform=\"translate(0," + std::to_string(static_cast<int>(i) * kPanelHeight) + ")\">\n";
    out += panels[i];
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace trainfit::plot
