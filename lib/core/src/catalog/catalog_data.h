// The conf/*.json catalogs, compiled in by CMake (see lib/CMakeLists.txt).
#pragma once

namespace trainfit::catalog_data {
extern const char kModelsJson[];
extern const char kGpusJson[];
extern const char kLikelyRangeJson[];  // conf/likely_range.json (tests/published/ranges.py)
}  // namespace trainfit::catalog_data
