// Text helpers against what the C library prints: format_fixed must print what printf's
// "%.Nf" prints, since messages and the audit log were written with printf before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "trainfit/util/text.h"

namespace trainfit {
namespace {

std::string printf_fixed(double value, int decimals) {
  char buffer[400];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

TEST(Text, FormatFixedPrintsWhatPrintfPrints) {
  const double edges[] = {0.0,  -0.0, 0.05, 0.15, 0.25, 1.45, 2.5, 79.6499999, 79.65, 1e-9, -3.75, 1e15,
                          1e300, std::numeric_limits<double>::max(), std::numeric_limits<double>::denorm_min(),
                          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (const double v : edges) {
    for (int decimals = 0; decimals <= 6; ++decimals) {
      EXPECT_EQ(format_fixed(v, decimals), printf_fixed(v, decimals)) << v << " with " << decimals << " decimals";
    }
  }
  std::mt19937_64 random(20261206);
  std::uniform_real_distribution<double> gib(0, 2048.0 * 1073741824.0);
  for (int i = 0; i < 20000; ++i) {
    const double bytes = gib(random);
    ASSERT_EQ(format_gib(bytes), printf_fixed(bytes / 1073741824.0, 1)) << bytes;
  }
}

}  // namespace
}  // namespace trainfit
