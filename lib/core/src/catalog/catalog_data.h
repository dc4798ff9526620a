// The conf/*.json catalogs, compiled in by CMake (see lib/CMakeLists.txt).
#pragma once

namespace trainfit::catalog_data {
extern const char kModelsJson[];
extern const char kGpusJson[];
}  // namespace trainfit::catalog_data
