// The chart layer's private pieces: number formatting, scales, ticks and the panel's
// fixed layout (plot box, legend column).
#pragma once

#include <string>
#include <vector>

#include "trainfit/plot.h"

namespace trainfit::plot::detail {

// The plot box inside a 720 x 420 panel; the legend sits right of it.
constexpr double kLeft = 72, kRight = 520, kTop = 64, kBottom = 352;
constexpr double kLegendX = 536;
constexpr int kFont = 12, kTitleFont = 15, kTickFont = 11;

// Fixed-point text ("%.*f" in the C locale, "-0" written "0"): coordinates and labels.
std::string fixed(double value, int decimals);

// Maps values of one axis onto [from, to] pixels.
class Mapping {
 public:
  Mapping(const Axis& axis, double from, double to);
  double operator()(double value) const;

 private:
  bool log_;
  double lo_, hi_, from_, to_;
};

struct Tick {
  double value;
  std::string label;
};
std::vector<Tick> ticks(const Axis& axis);

// "1", "512", "1K", "128K", "1M": powers of two as users write GPU counts and tokens.
std::string binary_label(double value);

// The smallest "nice" number (1, 2, 2.5, 5 x 10^k) at or above value.
double nice_ceiling(double value);

}  // namespace trainfit::plot::detail
